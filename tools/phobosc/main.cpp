// phobosc: the Phobos command (spec §6): check, emit, run, tune.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "npy.h"
#include "phobos/cuda.h"
#include "phobos/phobos.h"

namespace {

using phobos::DType;

std::map<std::string, int64_t> parse_assignments(const std::vector<std::string>& items,
                                                 const char* what) {
  std::map<std::string, int64_t> m;
  for (auto& item : items) {
    std::stringstream ss(item);
    std::string kv;
    while (std::getline(ss, kv, ',')) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        throw phobos::Error(std::string(what) + " expects NAME=VALUE, got '" + kv + "'");
      try {
        m[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
      } catch (const std::exception&) {
        throw phobos::Error(std::string(what) + " value of " + kv.substr(0, eq) +
                            " is not an integer: '" + kv.substr(eq + 1) + "'");
      }
    }
  }
  return m;
}

std::map<std::string, std::string> parse_pairs(const std::vector<std::string>& items,
                                               const char* what) {
  std::map<std::string, std::string> m;
  for (auto& kv : items) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw phobos::Error(std::string(what) + " expects NAME=VALUE, got '" + kv + "'");
    m[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return m;
}

struct Sig {  // the kernel's parameters, parsed back from its IR header
  struct P {
    std::string name;
    bool tensor;
    DType dt;
    std::vector<std::string> dims;
  };
  std::vector<P> params;
};

Sig signature(const phobos::Kernel& k, const std::map<std::string, int64_t>& params) {
  Sig s;
  std::stringstream ir(k.ir(params));
  std::string line;
  while (std::getline(ir, line)) {
    if (line.rfind("  arg ", 0) != 0) continue;
    Sig::P p;
    size_t colon = line.find(':');
    p.name = line.substr(6, colon - 6);
    std::string ty = line.substr(colon + 2);
    p.tensor = ty.rfind("tensor<", 0) == 0;
    std::string dt = p.tensor ? ty.substr(7, ty.find('>') - 7) : ty;
    p.dt = *phobos::dtype_from_name(dt);
    if (p.tensor) {
      std::string dims = ty.substr(ty.find('[') + 1, ty.find(']') - ty.find('[') - 1);
      std::stringstream ds(dims);
      std::string d;
      while (std::getline(ds, d, ',')) p.dims.push_back(d.substr(d.find_first_not_of(' ')));
    }
    s.params.push_back(p);
  }
  return s;
}

double tolerance(DType t) {
  return t == DType::F16 ? 5e-3 : t == DType::BF16 ? 1e-2 : t == DType::F32 ? 1e-5 : 0;
}

int cmd_run(const std::string& file, const std::string& kname,
            const std::vector<std::string>& dims_s, const std::string& target,
            const std::vector<std::string>& ins, const std::vector<std::string>& outs,
            const std::vector<std::string>& scalars, const std::vector<std::string>& params_s,
            unsigned seed, bool tune_only, bool verbose) {
  auto mod = phobos::compile_file(file);
  auto k = mod.kernel(kname);
  auto fixed = parse_assignments(params_s, "--param");
  auto dims = parse_assignments(dims_s, "--dims");
  auto in_files = parse_pairs(ins, "--in");
  auto out_files = parse_pairs(outs, "--out");
  auto scalar_vals = parse_pairs(scalars, "--scalar");
  Sig sig = signature(k, fixed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<phobosc::Npy> host(sig.params.size());
  std::vector<phobos::Arg> args;
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const auto& p = sig.params[i];
    if (!p.tensor) {
      double v = 1.0;
      if (scalar_vals.count(p.name))
        v = std::stod(scalar_vals[p.name]);
      else
        v = 0.5 + 0.5 * (uni(rng) + 1.0) / 2.0;
      args.emplace_back(v);
      continue;
    }
    phobosc::Npy& a = host[i];
    if (in_files.count(p.name)) {
      a = phobosc::read_npy(in_files[p.name]);
      if (a.dtype != p.dt)
        throw phobos::Error("--in " + p.name + ": the file holds " + phobos::dtype_name(a.dtype) +
                            " but the kernel declares " + phobos::dtype_name(p.dt));
    } else {
      a.dtype = p.dt;
      for (auto& d : p.dims) {
        if (std::isdigit(static_cast<unsigned char>(d[0])))
          a.shape.push_back(std::stoll(d));
        else if (dims.count(d))
          a.shape.push_back(dims[d]);
        else
          throw phobos::Error("--dims gives no value for dimension symbol " + d + " (of " + p.name +
                              ")");
      }
      size_t n = 1;
      for (auto s : a.shape) n *= static_cast<size_t>(s);
      a.data.resize(n * phobos::dtype_size(p.dt));
      for (size_t j = 0; j < n; ++j)
        phobos::store_elem(p.dt, a.data.data(), static_cast<int64_t>(j), uni(rng));
    }
    args.emplace_back(phobos::TensorView{a.data.data(), a.dtype, a.shape});
  }
  phobos::LaunchOptions opt;
  opt.params = fixed;
  opt.target = target == "cuda" ? phobos::Target::Cuda : phobos::Target::Cpu;
  std::vector<void*> dev(args.size(), nullptr);
  std::vector<phobos::Arg> run_args = args;
  if (opt.target == phobos::Target::Cuda)
    for (size_t i = 0; i < args.size(); ++i)
      if (sig.params[i].tensor) {
        dev[i] = phobos::cuda::alloc(host[i].data.size());
        phobos::cuda::copy_to_device(dev[i], host[i].data.data(), host[i].data.size());
        std::get<phobos::TensorView>(run_args[i]).data = dev[i];
      }
  if (tune_only) {
    auto res = k.tune(run_args, opt);
    std::printf("%-40s %-10s %s\n", "candidate", "time (us)", "status");
    for (auto& r : res.rows) {
      std::string ps;
      for (auto& [n, v] : r.params) ps += n + "=" + std::to_string(v) + " ";
      if (r.valid)
        std::printf("%-40s %-10.1f %s\n", ps.c_str(), r.seconds * 1e6,
                    r.params == res.best ? "best" : "ok");
      else
        std::printf("%-40s %-10s skipped%s%s\n", ps.c_str(), "-", verbose ? ": " : "",
                    verbose ? r.reason.c_str() : "");
    }
    std::printf("cache key %s\n", res.cache_key.c_str());
    return 0;
  }
  auto ref = k.reference_f64(args, fixed);
  auto t0 = std::chrono::steady_clock::now();
  k.launch(run_args, opt);
  if (opt.target == phobos::Target::Cuda) phobos::cuda::synchronize();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int rc = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!sig.params[i].tensor) continue;
    auto& a = host[i];
    if (dev[i]) phobos::cuda::copy_to_host(a.data.data(), dev[i], a.data.size());
    size_t n = a.data.size() / phobos::dtype_size(a.dtype);
    double num = 0, den = 0;
    bool written = false;
    for (size_t j = 0; j < n; ++j) {
      double y = phobos::load_elem(a.dtype, a.data.data(), static_cast<int64_t>(j));
      double r = ref[i][j];
      num += (y - r) * (y - r);
      den += r * r;
      written |= y != r;
    }
    double err = std::sqrt(num) / (std::sqrt(den) + 1e-30);
    if (written || out_files.count(sig.params[i].name)) {
      bool ok = err <= tolerance(a.dtype);
      std::printf("%s: rms_scaled error vs float64 %.3e (tolerance %.0e) %s\n",
                  sig.params[i].name.c_str(), err, tolerance(a.dtype), ok ? "ok" : "FAIL");
      if (!ok) rc = 1;
    }
    if (out_files.count(sig.params[i].name)) phobosc::write_npy(out_files[sig.params[i].name], a);
    if (dev[i]) phobos::cuda::free(dev[i]);
  }
  std::printf("time %.3f ms (%s, first launch includes autotuning/compilation)\n", secs * 1e3,
              target.c_str());
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"phobosc: the Phobos compiler (check, emit, run, tune)"};
  app.require_subcommand(1);
  std::string file, kname, target = "ir", run_target = "cpu";
  std::vector<std::string> params, dims, ins, outs, scalars;
  unsigned seed = 1;
  bool verbose = false;
  auto* check = app.add_subcommand("check", "parse and type-check a .ph file");
  check->add_option("file", file)->required();
  auto* emit = app.add_subcommand(
      "emit", "print the IR, the GPU plan, the generated CUDA C++ or ahead-of-time CPU C++");
  emit->add_option("file", file)->required();
  emit->add_option("--target", target, "ir | plan | cuda | cpp")
      ->check(CLI::IsMember({"ir", "plan", "cuda", "cpp"}));
  emit->add_option("--kernel", kname, "one kernel (default: all)");
  emit->add_option("--param", params, "autotune parameter values P=V (default: first candidates)");
  for (auto* sc :
       {app.add_subcommand("run", "run on random or given data and compare with float64"),
        app.add_subcommand("tune", "autotune and print the table of candidates")}) {
    sc->add_option("file", file)->required();
    sc->add_option("--kernel", kname)->required();
    sc->add_option("--dims", dims, "dimension symbols, M=..,N=..,K=..");
    sc->add_option("--target", run_target, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}));
    sc->add_option("--param", params, "fix autotune parameters P=V");
    sc->add_option("--in", ins, "NAME=FILE.npy input for a tensor parameter");
    sc->add_option("--scalar", scalars, "NAME=VALUE for a scalar parameter");
    sc->add_option("--seed", seed, "random seed");
    if (sc->get_name() == "run")
      sc->add_option("--out", outs, "NAME=FILE.npy to write a tensor back");
    if (sc->get_name() == "tune")
      sc->add_flag("-v,--verbose", verbose, "print why candidates are skipped");
  }
  CLI11_PARSE(app, argc, argv);
  try {
    std::string sub = app.get_subcommands()[0]->get_name();
    if (sub == "check") {
      auto mod = phobos::compile_file(file);
      std::printf("%s: ok (%zu kernel%s)\n", file.c_str(), mod.kernel_names().size(),
                  mod.kernel_names().size() == 1 ? "" : "s");
      return 0;
    }
    if (sub == "emit") {
      auto mod = phobos::compile_file(file);
      auto p = parse_assignments(params, "--param");
      std::vector<std::string> names =
          kname.empty() ? mod.kernel_names() : std::vector<std::string>{kname};
      for (size_t i = 0; i < names.size(); ++i) {
        auto k = mod.kernel(names[i]);
        std::map<std::string, int64_t> mine;
        for (auto& n : k.tune_parameter_names())
          if (p.count(n)) mine[n] = p[n];
        if (i) std::printf("\n");
        std::string out = target == "ir"     ? k.ir(mine)
                          : target == "plan" ? k.plan(mine)
                          : target == "cpp"  ? k.cpp_source(mine)
                                             : k.cuda_source(mine);
        std::fwrite(out.data(), 1, out.size(), stdout);
      }
      return 0;
    }
    return cmd_run(file, kname, dims, run_target, ins, outs, scalars, params, seed, sub == "tune",
                   verbose);
  } catch (const phobos::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "phobosc: error: %s\n", e.what());
    return 1;
  }
}
