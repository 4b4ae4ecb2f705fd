#include "eval_scalar.h"

#include <cmath>

namespace phobos::ir {

static thread_local int tl_exact = 0;
ExactFloat::ExactFloat() {
  ++tl_exact;
}
ExactFloat::~ExactFloat() {
  --tl_exact;
}
bool exact_float() {
  return tl_exact > 0;
}
double round_value(DType dt, double v) {
  return tl_exact && is_float(dt) ? v : round_to(dt, v);
}

static double gelu_tanh(double x) {
  // The tanh form (spec §3): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  const double k = 0.7978845608028654;
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

static double math_fn(const std::string& f, double x) {
  if (f == "exp") return std::exp(x);
  if (f == "log") return std::log(x);
  if (f == "sqrt") return std::sqrt(x);
  if (f == "rsqrt") return 1.0 / std::sqrt(x);
  if (f == "tanh") return std::tanh(x);
  if (f == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (f == "gelu") return gelu_tanh(x);
  if (f == "silu") return x / (1.0 + std::exp(-x));
  if (f == "relu") return x > 0 ? x : 0.0;
  if (f == "abs") return std::fabs(x);
  return NAN;
}

double eval_scalar_op(const Node& n, double a, double b) {
  DType dt = n.type.dt;
  bool fl = is_float(dt) || (n.type.weak && is_float(dt));
  double r = 0;
  switch (n.op) {
    case Op::Neg:
      r = -a;
      break;
    case Op::Not:
      r = a == 0;
      break;
    case Op::Add:
      r = a + b;
      break;
    case Op::Sub:
      r = a - b;
      break;
    case Op::Mul:
      r = a * b;
      break;
    case Op::Div:
      if (fl)
        r = a / b;
      else
        r = b == 0 ? 0 : std::trunc(a / b);  // division by zero on integers is 0 (defined)
      break;
    case Op::Mod:
      if (fl)
        r = std::fmod(a, b);
      else
        r = b == 0 ? 0 : a - b * std::trunc(a / b);
      break;
    case Op::Lt:
      return a < b;
    case Op::Le:
      return a <= b;
    case Op::Gt:
      return a > b;
    case Op::Ge:
      return a >= b;
    case Op::Eq:
      return a == b;
    case Op::Ne:
      return a != b;
    case Op::And:
      return (a != 0) && (b != 0);
    case Op::Or:
      return (a != 0) || (b != 0);
    case Op::Min:
      r = std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
      break;
    case Op::Max:
      r = std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
      break;
    case Op::Cdiv:
      r = b == 0 ? 0 : std::ceil(a / b);
      break;
    case Op::Math:
      r = math_fn(n.fn, a);
      break;
    case Op::Cast:
      r = a;
      break;
    default:
      r = a;
      break;
  }
  if (n.type.weak && is_float(dt)) return r;  // untyped literal arithmetic stays exact
  return round_value(dt, r);
}

}  // namespace phobos::ir
