#include "tune.h"

#include <chrono>
#include <cstring>

#include "../emit/emit.h"
#include "../passes/plan.h"
#include "cache.h"
#include "phobos/cuda.h"

namespace phobos {

std::string shape_class(const ir::Kernel& k, const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t p2 = 1;
    while (p2 < dims[i]) p2 *= 2;
    int64_t a = 1;
    while (a < 256 && dims[i] % (a * 2) == 0) a *= 2;
    s += (i ? "," : "") + k.dims[i] + "<=" + std::to_string(p2) + "%" + std::to_string(a);
  }
  return s;
}

std::string candidate_error(const ir::Kernel& inst, const std::vector<int64_t>& dims,
                            Target target) {
  std::string e = check_aligned(inst, dims);
  if (!e.empty()) return e;
  passes::Plan p = passes::plan_kernel(inst);
  if (p.unsupported && target == Target::Cpu) return {};
  return p.error;
}

std::string tune_key(const Program& prog, const ir::Kernel& k, const std::string& device,
                     const std::vector<int64_t>& dims) {
  return "phobos/" + k.name + "/" + prog.source_hash + "/" + device + "/" + shape_class(k, dims);
}

static std::string params_str(const std::map<std::string, int64_t>& p) {
  std::string s;
  for (auto& [n, v] : p) s += (s.empty() ? "" : " ") + n + "=" + std::to_string(v);
  return s;
}

// Saves (to_host) or restores an output tensor around timed runs, wherever it lives.
static void copy(void* dst, const void* src, size_t n, Target t, bool to_host) {
  if (t == Target::Cpu)
    std::memcpy(dst, src, n);
  else if (to_host)
    cuda::copy_to_host(dst, src, n);
  else
    cuda::copy_to_device(dst, src, n);
}

TuneResult autotune(const Program& prog, const ast::Kernel& ak, std::span<const Arg> args,
                    const LaunchOptions& opt, const std::string& device, const Runner& run) {
  TuneSpace sp = tune_space(ak);
  TuneResult res;
  if (opt.target == Target::Cuda) {
    // Compile every valid candidate in parallel first; the timing loop then loads cubins.
    std::vector<ir::Kernel> insts;
    for (size_t i = 0; i < sp.size(); ++i) {
      auto p = sp.at(i);
      bool skip = false;
      for (auto& [n, v] : opt.params) skip |= p.count(n) && p[n] != v;
      if (skip) continue;
      try {
        ir::Kernel inst = instantiate(prog, ak, p);
        if (candidate_error(inst, bind_args(inst, args).dims, opt.target).empty())
          insts.push_back(std::move(inst));
      } catch (const CompileError&) {
      } catch (const Error&) {
      }
    }
    std::vector<const ir::Kernel*> ptrs;
    for (auto& k : insts) ptrs.push_back(&k);
    cuda_precompile(prog, ptrs);
  }
  std::optional<BoundArgs> bound;
  std::vector<std::vector<char>> saved;  // outputs, restored before every timed run
  std::vector<int> stored;
  double best = 1e300;
  for (size_t i = 0; i < sp.size(); ++i) {
    TuneRow row;
    row.params = sp.at(i);
    bool skip = false;
    for (auto& [n, v] : opt.params)
      if (row.params.count(n) && row.params[n] != v) skip = true;
    if (skip) continue;
    ir::Kernel inst;
    try {
      inst = instantiate(prog, ak, row.params);
    } catch (const CompileError& e) {
      row.reason = prog.sm.format(e.loc, e.what());
      while (!row.reason.empty() && row.reason.back() == '\n') row.reason.pop_back();
      res.rows.push_back(row);
      continue;
    }
    if (!bound) {
      bound = bind_args(inst, args);
      res.cache_key = tune_key(prog, inst, device, bound->dims);
      std::function<void(const std::vector<ir::Stmt>&)> scan = [&](const std::vector<ir::Stmt>& b) {
        for (auto& s : b) {
          if (s.kind == ir::Stmt::Store &&
              std::find(stored.begin(), stored.end(), s.tensor) == stored.end())
            stored.push_back(s.tensor);
          scan(s.body);
          scan(s.else_body);
        }
      };
      scan(inst.body);
      for (int t : stored) {
        const TensorView& v = bound->tensors[t];
        size_t n = dtype_size(v.dtype);
        for (auto d : v.shape) n *= static_cast<size_t>(d);
        saved.emplace_back(n);
        copy(saved.back().data(), v.data, n, opt.target, true);
      }
    }
    row.reason = candidate_error(inst, bound->dims, opt.target);
    if (!row.reason.empty()) {
      res.rows.push_back(row);
      continue;
    }
    row.valid = true;
    double t_best = 1e300;
    for (int rep = 0; rep < 3; ++rep) {
      for (size_t s = 0; s < saved.size(); ++s)
        copy(bound->tensors[stored[s]].data, saved[s].data(), saved[s].size(), opt.target, false);
      auto t0 = std::chrono::steady_clock::now();
      run(inst, *bound);
      if (opt.target == Target::Cuda) cuda::synchronize();  // time the kernel, not the launch
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      t_best = std::min(t_best, dt);
      if (dt > 0.2) break;  // slow candidates (the interpreter on big shapes): one run is enough
    }
    row.seconds = t_best;
    if (t_best < best) {
      best = t_best;
      res.best = row.params;
    }
    res.rows.push_back(row);
  }
  for (size_t s = 0; s < saved.size(); ++s)
    copy(bound->tensors[stored[s]].data, saved[s].data(), saved[s].size(), opt.target, false);
  if (res.best.empty()) {
    // Name the dimension: an @aligned failure is the most useful reason to show.
    const TuneRow* why = res.rows.empty() ? nullptr : &res.rows.front();
    for (auto& r : res.rows)
      if (r.reason.find("@aligned") != std::string::npos) {
        why = &r;
        break;
      }
    throw Error("no @autotune candidate of '" + ak.name + "' can serve this launch" +
                (why ? " (" + params_str(why->params) + ": " + why->reason + ")" : std::string()));
  }
  tune_cache()->put(res.cache_key, TuneEntry{res.best, best});
  return res;
}

}  // namespace phobos
