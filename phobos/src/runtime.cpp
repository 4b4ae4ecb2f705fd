// phobos::compile, Module and Kernel: the API over the compiler, the interpreter, the CUDA
// path and the autotuner.
#include <fstream>
#include <sstream>

#include "bind.h"
#include "emit/emit.h"
#include "interp.h"
#include "passes/plan.h"
#include "phobos/cuda.h"
#include "phobos/phobos.h"
#include "program.h"
#include "tune/cache.h"
#include "tune/tune.h"

namespace phobos {

namespace {

[[noreturn]] void rethrow(const Program& p, const CompileError& e) {
  std::string s = p.sm.format(e.loc, e.what());
  while (!s.empty() && s.back() == '\n') s.pop_back();
  throw Error(s);
}

const ast::Kernel& find(const Program& p, const std::string& name) {
  const ast::Kernel* k = p.find_kernel(name);
  if (!k) throw Error("no kernel named '" + name + "' in " + p.sm.name(0));
  return *k;
}

// Missing autotune parameters take their first candidate (for printing one instance).
std::map<std::string, int64_t> complete(const ast::Kernel& k, std::map<std::string, int64_t> p) {
  TuneSpace sp = tune_space(k);
  for (size_t i = 0; i < sp.names.size(); ++i)
    if (!p.count(sp.names[i])) p[sp.names[i]] = sp.values[i][0];
  return p;
}

ir::Kernel instance(const Program& p, const std::string& name,
                    const std::map<std::string, int64_t>& params) {
  const ast::Kernel& k = find(p, name);
  try {
    return instantiate(p, k, complete(k, params));
  } catch (const CompileError& e) {
    rethrow(p, e);
  }
}

Runner runner_for(Target t, const LaunchOptions& opt, const Program& prog) {
  if (t == Target::Cpu) return [](const ir::Kernel& k, const BoundArgs& b) { interpret(k, b); };
  return [&opt, &prog](const ir::Kernel& k, const BoundArgs& b) {
    cuda_launch(prog, k, b, opt.stream);
  };
}

std::string device_name(Target t) {
  return t == Target::Cpu ? "cpu" : cuda_device_name();
}

}  // namespace

Module compile(const std::string& source, const std::string& filename, const CompileOptions& opt) {
  auto prog = std::make_shared<Program>();
  try {
    load_program(*prog, source, filename, CompileOptionsInternal{opt.include_dirs});
    // Check every kernel's attributes and its first instance now, so a bad program fails at
    // compile() rather than at its first launch.
    for (auto& k : prog->kernels) instantiate(*prog, *k, complete(*k, {}));
  } catch (const CompileError& e) {
    rethrow(*prog, e);
  }
  Module m;
  m.prog_ = prog;
  return m;
}

Module compile_file(const std::string& path, const CompileOptions& opt) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return compile(ss.str(), path, opt);
}

Kernel Module::kernel(const std::string& name) const {
  find(*prog_, name);
  Kernel k;
  k.prog_ = prog_;
  k.name_ = name;
  return k;
}

std::vector<std::string> Module::kernel_names() const {
  std::vector<std::string> out;
  for (auto& k : prog_->kernels)
    if (k->loc.file == 0) out.push_back(k->name);
  return out;
}

const std::string& Module::source_hash() const {
  return prog_->source_hash;
}

std::vector<std::string> Kernel::tune_parameter_names() const {
  return tune_space(find(*prog_, name_)).names;
}

std::string Kernel::ir(const std::map<std::string, int64_t>& params) const {
  return ir::print(instance(*prog_, name_, params));
}

std::string Kernel::cuda_source(const std::map<std::string, int64_t>& params) const {
  ir::Kernel k = instance(*prog_, name_, params);
  return emit_cuda(*prog_, k);
}

std::string Kernel::cpp_source(const std::map<std::string, int64_t>& params) const {
  ir::Kernel k = instance(*prog_, name_, params);
  return emit_cpp(*prog_, k);
}

std::string Kernel::plan(const std::map<std::string, int64_t>& params) const {
  ir::Kernel k = instance(*prog_, name_, params);
  return ir::print(k) + passes::print_plan(k, passes::plan_kernel(k));
}

std::vector<std::vector<double>> Kernel::reference_f64(
    std::span<const Arg> args, const std::map<std::string, int64_t>& params) const {
  ir::Kernel k = instance(*prog_, name_, params);
  return interpret_f64(k, bind_args(k, args));
}

TuneResult Kernel::tune(std::span<const Arg> args, const LaunchOptions& opt) const {
  const ast::Kernel& ak = find(*prog_, name_);
  return autotune(*prog_, ak, args, opt, device_name(opt.target),
                  runner_for(opt.target, opt, *prog_));
}

void Kernel::launch(std::span<const Arg> args, const LaunchOptions& opt) const {
  const ast::Kernel& ak = find(*prog_, name_);
  TuneSpace sp = tune_space(ak);
  std::map<std::string, int64_t> chosen = opt.params;
  bool all_fixed = true;
  for (auto& n : sp.names) all_fixed &= chosen.count(n) > 0;
  Runner run = runner_for(opt.target, opt, *prog_);
  if (!all_fixed) {
    // A cached winner is used when it is still valid for this shape; otherwise tune (or, with
    // autotune off, take the first valid candidate without timing).
    ir::Kernel probe = instance(*prog_, name_, chosen);
    BoundArgs b = bind_args(probe, args);
    std::string key = tune_key(*prog_, probe, device_name(opt.target), b.dims);
    bool found = false;
    if (auto e = tune_cache()->get(key)) {
      bool match = e->params.size() == sp.names.size();
      for (auto& [n, v] : opt.params) match &= e->params.count(n) && e->params.at(n) == v;
      if (match) {
        try {
          ir::Kernel inst = instantiate(*prog_, ak, e->params);
          if (candidate_error(inst, b.dims, opt.target).empty()) {
            chosen = e->params;
            found = true;
          }
        } catch (const CompileError&) {
        }
      }
    }
    if (!found && opt.autotune) {
      chosen = autotune(*prog_, ak, args, opt, device_name(opt.target), run).best;
    } else if (!found) {
      std::string first_reason;
      for (size_t i = 0; i < sp.size() && !found; ++i) {
        auto p = sp.at(i);
        bool ok = true;
        for (auto& [n, v] : opt.params) ok &= p.at(n) == v;
        if (!ok) continue;
        try {
          std::string why = candidate_error(instantiate(*prog_, ak, p), b.dims, opt.target);
          if (why.empty()) {
            chosen = p;
            found = true;
          } else if (first_reason.empty() || why.find("@aligned") != std::string::npos) {
            first_reason = why;
          }
        } catch (const CompileError&) {
        }
      }
      if (!found)
        throw Error("no @autotune candidate of '" + name_ + "' can serve this launch (" +
                    first_reason + ")");
    }
  }
  ir::Kernel inst = instance(*prog_, name_, chosen);
  BoundArgs b = bind_args(inst, args);
  std::string why = candidate_error(inst, b.dims, opt.target);
  if (!why.empty()) throw Error("cannot launch '" + name_ + "': " + why);
  run(inst, b);
}

}  // namespace phobos
