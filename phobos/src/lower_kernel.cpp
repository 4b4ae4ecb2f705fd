// Kernel instances: attributes (spec §4), parameters, the body, and grid inference.
#include <functional>
#include <set>

#include "lower.h"

namespace phobos {

using namespace ir;

size_t TuneSpace::size() const {
  size_t n = 1;
  for (auto& v : values) n *= v.size();
  return n;
}

std::map<std::string, int64_t> TuneSpace::at(size_t i) const {
  std::map<std::string, int64_t> m;
  for (size_t d = names.size(); d-- > 0;) {
    m[names[d]] = values[d][i % values[d].size()];
    i /= values[d].size();
  }
  return m;
}

static const std::set<std::string> kAttrs = {"autotune", "launch",  "grid",
                                             "pipeline", "aligned", "tensorcore"};

TuneSpace tune_space(const ast::Kernel& k) {
  TuneSpace sp;
  std::set<std::string> seen_attr;
  for (auto& a : k.attrs) {
    if (!kAttrs.count(a.name))
      throw CompileError(a.loc, "unknown attribute '@" + a.name +
                                    "' (expected @autotune, @launch, @grid, @pipeline, @aligned "
                                    "or @tensorcore)");
    if (!seen_attr.insert(a.name).second)
      throw CompileError(a.loc, "attribute '@" + a.name + "' is given twice");
    if (a.name != "autotune") continue;
    if (a.args.empty()) throw CompileError(a.loc, "@autotune needs at least one 'P in [...]'");
    for (auto& arg : a.args) {
      if (!arg.is_list)
        throw CompileError(arg.loc, "@autotune arguments are written 'NAME in [v1, v2, ...]'");
      for (auto& n : sp.names)
        if (n == arg.key)
          throw CompileError(arg.loc, "autotune parameter '" + arg.key + "' is given twice");
      for (auto& p : k.params)
        if (p.name == arg.key)
          throw CompileError(
              arg.loc, "autotune parameter '" + arg.key + "' has the name of a kernel parameter");
      if (arg.list.empty())
        throw CompileError(arg.loc, "autotune parameter '" + arg.key + "' has no candidates");
      std::vector<int64_t> vals;
      for (auto& v : arg.list) {
        if (v->kind != ast::Expr::Int)
          throw CompileError(v->loc, "autotune candidates must be integer literals");
        if (v->ival <= 0)
          throw CompileError(v->loc, "autotune candidate " + std::to_string(v->ival) + " for '" +
                                         arg.key + "' must be positive");
        for (auto x : vals)
          if (x == v->ival)
            throw CompileError(v->loc, "autotune candidate " + std::to_string(x) + " for '" +
                                           arg.key + "' is listed twice");
        vals.push_back(v->ival);
      }
      sp.names.push_back(arg.key);
      sp.values.push_back(std::move(vals));
    }
  }
  for (auto& a : k.attrs) {
    bool takes_args = a.name != "pipeline" && a.name != "tensorcore";
    if (!takes_args && a.has_parens)
      throw CompileError(a.loc, "@" + a.name + " takes no arguments");
    if (takes_args && a.args.empty()) throw CompileError(a.loc, "@" + a.name + " needs arguments");
  }
  return sp;
}

// Matches `ctx.block.AX * c` (either order) where c equals the slice length.
static int block_axis_times(const NodeP& n, int64_t len) {
  if (!n || n->op != Op::Mul) return -1;
  for (int i = 0; i < 2; ++i) {
    const NodeP& a = n->args[i];
    const NodeP& b = n->args[1 - i];
    auto c = const_int(b);
    if (a->op == Op::Ctx && a->idx < 3 && c && *c == len) return a->idx;
  }
  return -1;
}

static void infer_grid(ir::Kernel& k, const ast::Kernel& ak) {
  std::function<bool(const std::vector<Stmt>&)> scan = [&](const std::vector<Stmt>& body) {
    for (auto& s : body) {
      if (s.kind == Stmt::Store) {
        bool any = false;
        std::array<NodeP, 3> g;
        for (size_t d = 0; d < s.slices.size(); ++d) {
          const Slice& sl = s.slices[d];
          int ax = sl.point ? -1 : block_axis_times(sl.start, sl.len);
          if (ax < 0 || g[ax]) continue;
          const ir::Arg& a = k.args[s.tensor];
          NodeP extent = a.dims[d] < 0 ? int_const(a.dim_const[d], false)
                                       : make_leaf(Op::Dim, a.dims[d], {DType::I32, {}});
          g[ax] = binary(Op::Cdiv, extent, int_const(sl.len), {});
          any = true;
        }
        if (any) {
          for (int i = 0; i < 3; ++i) k.grid[i] = g[i] ? g[i] : int_const(1, false);
          return true;
        }
      }
      if (scan(s.body) || scan(s.else_body)) return true;
    }
    return false;
  };
  if (!scan(k.body))
    throw CompileError(ak.loc, "cannot infer the launch grid of '" + ak.name +
                                   "' (no store of the form C[ctx.block.x * BM :+ BM, ...]); "
                                   "add @grid(x, y)");
}

ir::Kernel instantiate(const Program& prog, const ast::Kernel& ak,
                       const std::map<std::string, int64_t>& params) {
  ir::Kernel k;
  k.name = ak.name;
  TuneSpace sp = tune_space(ak);
  for (size_t i = 0; i < sp.names.size(); ++i) {
    auto it = params.find(sp.names[i]);
    if (it == params.end())
      throw CompileError(ak.loc, "no value given for autotune parameter '" + sp.names[i] + "'");
    k.params.push_back({sp.names[i], it->second});
  }
  for (auto& [n, v] : params) {
    bool known = false;
    for (auto& x : sp.names) known |= x == n;
    if (!known)
      throw CompileError(ak.loc, "kernel '" + ak.name + "' has no autotune parameter '" + n + "'");
  }
  Lowerer L(prog, k);
  L.push_frame();
  for (auto& [n, v] : k.params) L.bind(n, {Binding::Value, int_const(v)}, ak.loc);
  // Parameters: tensors bind their dimension symbols, which are also usable as values.
  std::map<std::string, int> dim_ids;
  for (auto& p : ak.params) {
    ir::Arg a;
    a.name = p.name;
    auto dt = dtype_from_name(p.type->dtype);
    if (!dt)
      throw CompileError(p.type->dtype_loc, "unknown element type '" + p.type->dtype +
                                                "' (expected f32, f16, bf16, i32, i8 or bool)");
    a.dt = *dt;
    if (p.type->kind == ast::TypeExpr::Tile)
      throw CompileError(p.type->loc, "kernel parameters are tensors or scalars, not tiles");
    if (p.type->kind == ast::TypeExpr::Tensor) {
      a.is_tensor = true;
      if (p.type->dims.empty() || p.type->dims.size() > 4)
        throw CompileError(p.type->loc, "a tensor has 1 to 4 dimensions");
      for (auto& d : p.type->dims) {
        if (d->kind == ast::Expr::Int) {
          if (d->ival <= 0) throw CompileError(d->loc, "a tensor dimension must be positive");
          a.dims.push_back(-1);
          a.dim_const.push_back(d->ival);
        } else if (d->kind == ast::Expr::Name) {
          for (auto& x : sp.names)
            if (x == d->name)
              throw CompileError(d->loc, "'" + d->name +
                                             "' is an autotune parameter; a tensor "
                                             "dimension is a symbol bound at launch or a literal");
          auto [it, fresh] = dim_ids.emplace(d->name, static_cast<int>(k.dims.size()));
          if (fresh) k.dims.push_back(d->name);
          a.dims.push_back(it->second);
          a.dim_const.push_back(0);
        } else {
          throw CompileError(d->loc, "a tensor dimension is a symbol (M) or an integer literal");
        }
      }
    }
    k.args.push_back(std::move(a));
  }
  L.push_scope();
  for (size_t i = 0; i < k.dims.size(); ++i) {
    for (auto& p : ak.params)
      if (p.name == k.dims[i])
        throw CompileError(p.loc, "'" + p.name + "' is both a parameter and a dimension symbol");
    L.bind(k.dims[i], {Binding::Value, make_leaf(Op::Dim, static_cast<int>(i), {DType::I32, {}})},
           ak.loc);
  }
  for (size_t i = 0; i < ak.params.size(); ++i) {
    const ir::Arg& a = k.args[i];
    if (a.is_tensor)
      L.bind(a.name, {Binding::Tensor, nullptr, -1, static_cast<int>(i)}, ak.params[i].loc);
    else
      L.bind(a.name, {Binding::Value, make_leaf(Op::Param, static_cast<int>(i), {a.dt, {}})},
             ak.params[i].loc);
  }
  for (auto& attr : ak.attrs) {
    if (attr.name == "pipeline") k.pipeline = true;
    if (attr.name == "tensorcore") k.tensorcore = true;
    if (attr.name == "launch") {
      if (attr.args.size() != 1 || !attr.args[0].key.empty())
        throw CompileError(attr.loc, "@launch takes one expression: the threads per block");
      int64_t t = L.const_int(*attr.args[0].value, "@launch(T)");
      if (t < 32 || t > 1024 || t % 32)
        throw CompileError(attr.args[0].loc,
                           "@launch: threads per block must be a multiple of "
                           "32 in 32..1024, got " +
                               std::to_string(t));
      k.threads = t;
      k.threads_explicit = true;
    }
    if (attr.name == "aligned") {
      for (auto& arg : attr.args) {
        if (arg.key.empty() || arg.is_list)
          throw CompileError(arg.loc, "@aligned arguments are written 'DIM = multiple'");
        auto it = dim_ids.find(arg.key);
        if (it == dim_ids.end())
          throw CompileError(arg.loc, "@aligned names '" + arg.key +
                                          "', which is not a "
                                          "dimension symbol of '" +
                                          ak.name + "'");
        int64_t m = L.const_int(*arg.value, "an @aligned multiple");
        if (m <= 0) throw CompileError(arg.value->loc, "an @aligned multiple must be positive");
        k.aligned.push_back({it->second, m});
      }
    }
  }
  L.lower_block(ak.body, k.body);
  for (auto& attr : ak.attrs) {
    if (attr.name != "grid") continue;
    if (attr.args.size() > 3)
      throw CompileError(attr.loc, "@grid takes 1 to 3 expressions (x, y, z)");
    for (int i = 0; i < 3; ++i) {
      if (i >= static_cast<int>(attr.args.size())) {
        k.grid[i] = int_const(1, false);
        continue;
      }
      const auto& arg = attr.args[i];
      if (!arg.key.empty()) throw CompileError(arg.loc, "@grid takes plain expressions");
      NodeP g = L.value(*arg.value);
      if (!g->type.scalar() || is_float(g->type.dt) || g->type.dt == DType::Bool ||
          !is_pure(g, k.regs))
        throw CompileError(arg.loc,
                           "a @grid extent must be an integer expression over "
                           "dimension symbols and parameters");
      bool bad = false;
      walk_node(g, [&](const Node& n) { bad |= n.op == Op::Ctx || n.op == Op::Reg; });
      if (bad) throw CompileError(arg.loc, "a @grid extent cannot use ctx or variables");
      k.grid[i] = cast(g, DType::I32);
    }
  }
  if (!k.grid[0]) infer_grid(k, ak);
  return k;
}

}  // namespace phobos
