#include "interp.h"

#include <cmath>
#include <functional>

#include "eval_scalar.h"

namespace phobos {

using namespace ir;

namespace {

struct Value {
  std::vector<int64_t> shape;
  std::vector<double> d;
  int64_t rows() const { return shape.size() == 2 ? shape[0] : 1; }
  int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
};

// Element (i, j) of `v` broadcast to a result of rank `r`.
inline double at(const Value& v, int64_t i, int64_t j) {
  switch (v.shape.size()) {
    case 0:
      return v.d[0];
    case 1:
      return v.d[v.shape[0] == 1 ? 0 : j];
    default:
      return v.d[(v.shape[0] == 1 ? 0 : i) * v.shape[1] + (v.shape[1] == 1 ? 0 : j)];
  }
}

class Interp {
 public:
  Interp(const ir::Kernel& k, const BoundArgs& a, std::vector<std::vector<double>>* f64)
      : k_(k), a_(a), f64_(f64), regs_(k.regs.size()) {}

  void run() {
    bool per_thread = false;
    std::function<void(const std::vector<Stmt>&)> scan = [&](const std::vector<Stmt>& b) {
      for (auto& s : b) {
        for (auto* n : {&s.value, &s.lo, &s.hi, &s.step, &s.cond})
          walk_node(*n, [&](const Node& x) { per_thread |= x.op == Op::Ctx && x.idx / 3 == 1; });
        for (auto& sl : s.slices)
          walk_node(sl.start,
                    [&](const Node& x) { per_thread |= x.op == Op::Ctx && x.idx / 3 == 1; });
        scan(s.body);
        scan(s.else_body);
      }
    };
    scan(k_.body);
    for (int i = 0; i < 3; ++i) grid_[i] = eval_host(k_, k_.grid[i], a_);
    int64_t threads = per_thread ? k_.threads : 1;
    for (block_[2] = 0; block_[2] < grid_[2]; ++block_[2])
      for (block_[1] = 0; block_[1] < grid_[1]; ++block_[1])
        for (block_[0] = 0; block_[0] < grid_[0]; ++block_[0])
          for (thread_ = 0; thread_ < threads; ++thread_) exec(k_.body);
  }

 private:
  const ir::Kernel& k_;
  const BoundArgs& a_;
  std::vector<std::vector<double>>* f64_;
  std::vector<Value> regs_;
  int64_t block_[3] = {0, 0, 0}, grid_[3] = {1, 1, 1}, thread_ = 0;

  int64_t offset(int tensor, const std::vector<int64_t>& idx, bool* inside) const {
    const TensorView& t = a_.tensors[tensor];
    int64_t off = 0;
    *inside = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (idx[d] < 0 || idx[d] >= t.shape[d]) *inside = false;
      off = off * t.shape[d] + idx[d];
    }
    return off;
  }

  // Visits every element of a slice: f(element index in the tile, index in the source).
  template <class F>
  void each(const std::vector<Slice>& sl, F&& f) {
    std::vector<int64_t> start(sl.size()), idx(sl.size());
    for (size_t d = 0; d < sl.size(); ++d) start[d] = static_cast<int64_t>(eval(sl[d].start).d[0]);
    int64_t n = 1;
    for (auto& s : sl) n *= s.point ? 1 : s.len;
    for (int64_t e = 0; e < n; ++e) {
      int64_t rem = e;
      for (size_t d = sl.size(); d-- > 0;) {
        int64_t len = sl[d].point ? 1 : sl[d].len;
        idx[d] = start[d] + rem % len;
        rem /= len;
      }
      f(e, idx);
    }
  }

  Value eval(const NodeP& n) {
    Value r;
    r.shape = n->type.shape;
    switch (n->op) {
      case Op::Const:
        r.d = {n->cval};
        return r;
      case Op::Ctx: {
        int kind = n->idx / 3, ax = n->idx % 3;
        r.d = {double(kind == 0 ? block_[ax] : kind == 1 ? (ax == 0 ? thread_ : 0) : grid_[ax])};
        return r;
      }
      case Op::Dim:
        r.d = {double(a_.dims[n->idx])};
        return r;
      case Op::Param:
        r.d = {a_.scalars[n->idx]};
        return r;
      case Op::Reg:
        return regs_[n->idx];
      case Op::Full: {
        double v = eval(n->args[0]).d[0];
        r.d.assign(n->type.numel(), v);
        return r;
      }
      case Op::Load:
        return load(n);
      case Op::Dot:
      case Op::DotT:
        return dot(n);
      case Op::Reduce:
        return reduce(n);
      default:
        break;
    }
    r.d.resize(n->type.numel());
    int64_t R = r.rows(), C = r.cols();
    if (n->args.size() == 1) {
      Value a = eval(n->args[0]);
      for (int64_t i = 0; i < R; ++i)
        for (int64_t j = 0; j < C; ++j) r.d[i * C + j] = eval_scalar_op(*n, at(a, i, j), 0);
      return r;
    }
    Value a = eval(n->args[0]), b = eval(n->args[1]);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) r.d[i * C + j] = eval_scalar_op(*n, at(a, i, j), at(b, i, j));
    return r;
  }

  Value load(const NodeP& n) {
    Value r;
    r.shape = n->type.shape;
    r.d.assign(n->type.numel(), 0.0);
    if (n->idx < 0) {  // a slice of a tile value
      Value src = eval(n->args[0]);
      each(n->slices, [&](int64_t e, const std::vector<int64_t>& idx) {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d) {
          if (idx[d] < 0 || idx[d] >= src.shape[d]) return;
          off = off * src.shape[d] + idx[d];
        }
        r.d[e] = src.d[off];
      });
      return r;
    }
    const TensorView& t = a_.tensors[n->idx];
    each(n->slices, [&](int64_t e, const std::vector<int64_t>& idx) {
      bool inside;
      int64_t off = offset(n->idx, idx, &inside);
      if (inside) r.d[e] = f64_ ? (*f64_)[n->idx][off] : load_elem(t.dtype, t.data, off);
    });
    return r;
  }

  Value dot(const NodeP& n) {
    Value a = eval(n->args[0]), b = eval(n->args[1]);
    bool tr = n->op == Op::DotT;
    int64_t R = a.shape[0], K = a.shape[1], C = n->type.shape[1];
    Value r;
    r.shape = n->type.shape;
    r.d.assign(R * C, 0.0);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) {
        double s = 0;
        for (int64_t q = 0; q < K; ++q)
          s += a.d[i * K + q] * (tr ? b.d[j * K + q] : b.d[q * C + j]);
        r.d[i * C + j] = round_value(n->type.dt, s);
      }
    return r;
  }

  Value reduce(const NodeP& n) {
    Value t = eval(n->args[0]);
    Value r;
    r.shape = n->type.shape;
    int64_t R = t.rows(), C = t.cols();
    bool rows = t.shape.size() == 2 && n->axis == 0;  // reduce over rows -> [1, C]
    int64_t outer = rows ? C : R, inner = rows ? R : C;
    r.d.resize(outer);
    for (int64_t o = 0; o < outer; ++o) {
      double acc = n->fn == "sum" ? 0.0 : n->fn == "max" ? -INFINITY : INFINITY;
      for (int64_t q = 0; q < inner; ++q) {
        double v = rows ? t.d[q * C + o] : t.d[o * C + q];
        if (n->fn == "sum")
          acc += v;
        else if (std::isnan(v) || std::isnan(acc))
          acc = NAN;
        else
          acc = n->fn == "max" ? std::max(acc, v) : std::min(acc, v);
      }
      r.d[o] = round_value(n->type.dt, acc);
    }
    return r;
  }

  void exec(const std::vector<Stmt>& body) {
    for (auto& s : body) {
      switch (s.kind) {
        case Stmt::Def:
          regs_[s.reg] = eval(s.value);
          break;
        case Stmt::Store: {
          Value v = eval(s.value);
          const TensorView& t = a_.tensors[s.tensor];
          each(s.slices, [&](int64_t e, const std::vector<int64_t>& idx) {
            bool inside;
            int64_t off = offset(s.tensor, idx, &inside);
            if (!inside) return;
            double x = v.d.size() == 1 ? v.d[0] : v.d[e];
            if (f64_)
              (*f64_)[s.tensor][off] = x;
            else
              store_elem(t.dtype, t.data, off, x);
          });
          break;
        }
        case Stmt::For: {
          int64_t lo = static_cast<int64_t>(eval(s.lo).d[0]);
          int64_t hi = static_cast<int64_t>(eval(s.hi).d[0]);
          int64_t step = static_cast<int64_t>(eval(s.step).d[0]);
          for (int64_t i = lo; i < hi; i += step) {
            regs_[s.reg] = Value{{}, {double(i)}};
            exec(s.body);
          }
          break;
        }
        case Stmt::If:
          if (eval(s.cond).d[0] != 0)
            exec(s.body);
          else
            exec(s.else_body);
          break;
      }
    }
  }
};

}  // namespace

void interpret(const ir::Kernel& k, const BoundArgs& args) {
  Interp in(k, args, nullptr);
  in.run();
}

std::vector<std::vector<double>> interpret_f64(const ir::Kernel& k, const BoundArgs& args) {
  std::vector<std::vector<double>> t(args.tensors.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const TensorView& v = args.tensors[i];
    if (!v.data) continue;
    int64_t n = 1;
    for (auto d : v.shape) n *= d;
    t[i].resize(n);
    for (int64_t j = 0; j < n; ++j) t[i][j] = load_elem(v.dtype, v.data, j);
  }
  ExactFloat exact;
  Interp in(k, args, &t);
  in.run();
  return t;
}

}  // namespace phobos
