// Phobos runtime API: compile a .ph program, pick a kernel, launch it.
//
//   auto mod = phobos::compile_file("sgemm.ph");
//   auto k = mod.kernel("sgemm");
//   k.launch({phobos::TensorView{a, DType::F32, {M, K}}, ..., 1.0, 0.0});
//
// Errors: compile errors are phobos::Error whose what() is the located diagnostic
// (`file.ph:LINE:COL: error: ...` + source line + caret); launch errors (a dimension symbol
// bound to two values, an @aligned promise no candidate can keep, a wrong dtype) are
// phobos::Error with one sentence naming the argument and its value.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "phobos/dtype.h"

// tc's buffers and streams (include/tc/tc.h), declared here so this header does not need tc.h.
struct tc_buffer;
struct tc_stream;

namespace phobos {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A dense row-major tensor in host memory (CPU target) or device memory (CUDA target).
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

// One launch argument, in the kernel's parameter order: a tensor or a scalar value.
using Arg = std::variant<TensorView, double>;

enum class Target { Cpu, Cuda };

// A tensor in a tc buffer: the target follows the buffer (host-visible memory runs on the CPU
// interpreter, device memory on CUDA).
struct BufferView {
  ::tc_buffer* buffer = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  size_t offset_bytes = 0;
};
using BufferArg = std::variant<BufferView, double>;

struct CompileOptions {
  std::vector<std::string> include_dirs;  // for `import "file.ph"`
};

struct LaunchOptions {
  Target target = Target::Cpu;
  // Fixes autotune parameters; those not given are autotuned (or read from the cache).
  std::map<std::string, int64_t> params;
  bool autotune = true;    // false: use the first valid candidate instead of timing
  void* stream = nullptr;  // CUDA: a cudaStream_t (nullptr = the default stream)
};

struct TuneRow {
  std::map<std::string, int64_t> params;
  bool valid = false;
  std::string reason;  // why it was skipped (invalid rows)
  double seconds = 0;  // best time (valid rows)
};

struct TuneResult {
  std::vector<TuneRow> rows;
  std::map<std::string, int64_t> best;
  std::string cache_key;
  bool from_cache = false;
};

struct Program;  // internal

class Kernel {
 public:
  const std::string& name() const { return name_; }
  std::vector<std::string> tune_parameter_names() const;
  // The tile IR / generated code of one instance (params: the autotune values; missing ones
  // take their first candidate).
  std::string ir(const std::map<std::string, int64_t>& params = {}) const;
  std::string cuda_source(const std::map<std::string, int64_t>& params = {}) const;
  // Portable C++ of one instance for ahead-of-time CPU use (`phobosc emit --target=cpp`).
  std::string cpp_source(const std::map<std::string, int64_t>& params = {}) const;
  std::string plan(const std::map<std::string, int64_t>& params = {}) const;  // GPU lowering plan
  // Runs the kernel; throws phobos::Error on a bad launch.
  void launch(std::span<const Arg> args, const LaunchOptions& opt = {}) const;
  void launch(std::initializer_list<Arg> args, const LaunchOptions& opt = {}) const {
    launch(std::span<const Arg>(args.begin(), args.size()), opt);
  }
  // The float64 reference: the kernel evaluated without float rounding on float64 copies of the
  // tensors (inputs are not modified). Returns every tensor argument's final contents.
  std::vector<std::vector<double>> reference_f64(
      std::span<const Arg> args, const std::map<std::string, int64_t>& params = {}) const;
  // Launch on tc buffers, ordered after the work queued on `stream` (may be null). On CUDA the
  // kernel is queued on the stream's cudaStream_t (tc_stream_native_handle) and the call
  // returns at once; without a stream, or on the CPU, it completes before returning. (A first
  // launch of a shape may autotune, which synchronizes.) Defined when phobos is linked with tc.
  void launch(std::span<const BufferArg> args, ::tc_stream* stream,
              const LaunchOptions& opt = {}) const;
  // Times every candidate on these arguments (outputs are overwritten) and caches the winner.
  TuneResult tune(std::span<const Arg> args, const LaunchOptions& opt = {}) const;

 private:
  friend class Module;
  std::shared_ptr<const Program> prog_;
  std::string name_;
};

class Module {
 public:
  Kernel kernel(const std::string& name) const;  // throws phobos::Error if absent
  std::vector<std::string> kernel_names() const;
  const std::string& source_hash() const;

 private:
  friend Module compile(const std::string&, const std::string&, const CompileOptions&);
  std::shared_ptr<const Program> prog_;
};

Module compile(const std::string& source, const std::string& filename = "<input>.ph",
               const CompileOptions& opt = {});
Module compile_file(const std::string& path, const CompileOptions& opt = {});

}  // namespace phobos
