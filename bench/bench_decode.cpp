// `tc bench decode`: the synthetic Llama-2-7B decode step on CUDA (issue 4). 32 layers of
// QKV 4096->12288, O 4096->4096, gate+up 4096->2x11008, down 11008->4096, plus the 32000x4096
// head, in Q4_0 / Q8_0 / Q4_K with random valid blocks. All 129 GEMVs of a step are queued on
// one stream with the launchers of src/cuda/quant_kernels.h (the kernels the dispatch table
// picks) and captured into one CUDA graph, so launch gaps vanish; the graph is timed with CUDA
// events (median). Batch 1 is also timed through the public API (tc_gemv_quantized_async,
// captured into a graph and queued per step, with and without TC_QUANT_WEIGHTS_CONSTANT, and
// the host microseconds per queued call). `--x` (DecodeBenchOptions::x) adds the step with X
// given in f16 / bf16, which the decode kernels read as it is, or as Q8_0 blocks (batches <= 2);
// `--per-shape` each layer shape alone. Prints tok/s, effective GB/s of weight bytes, the share
// of the copy bandwidth measured in the same run, and the peak device memory of each format
// against weight bytes + activations.
#include "bench_decode.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cuda/quant_kernels.h"
#include "cuda/quant_mma_b32.h"
#include "gpu_timer.h"

namespace tc::bench {
namespace {

namespace kq = tc::cuda::quant;

struct Shape {
  int N, K;
};
constexpr Shape kLayer[] = {{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008}};
constexpr Shape kHead = {32000, 4096};
constexpr int kMaxBatch = 32;

struct Buffer {
  tc_buffer_t* b = nullptr;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : b(o.b) { o.b = nullptr; }
  ~Buffer() {
    if (b) tc_buffer_free(b);
  }
  void reset() {
    if (b) tc_buffer_free(b);
    b = nullptr;
  }
  void* ptr() const { return tc_buffer_device_ptr(b); }
};

bool alloc(tc_context_t* ctx, size_t bytes, Buffer* out) {
  if (tc_buffer_alloc(ctx, bytes, &out->b) == TC_SUCCESS) return true;
  fmt::print(stderr, "tc bench decode: allocating {} bytes: {}\n", bytes, tc_last_error_message());
  return false;
}

struct Step {
  std::vector<Buffer> w;  // per GEMV of the step
  std::vector<Shape> shape;
  size_t weight_bytes = 0;
};

// Queues one decode step for `batch` rows (the GEMVs `only` names, or all of them); returns
// false (message printed) on a launch error.
bool queue_step(const Step& s, tc_dtype_t fmt, int batch, bool act8, tc_dtype_t xt, const void* x,
                float* y, void* work, size_t work_bytes, cudaStream_t st,
                std::set<std::string>* kernels, const std::vector<size_t>& only) {
  for (size_t j = 0; j < (only.empty() ? s.w.size() : only.size()); ++j) {
    const size_t i = only.empty() ? j : only[j];
    kq::Args a;
    a.M = batch;
    a.N = s.shape[i].N;
    a.K = s.shape[i].K;
    a.w_dtype = fmt;
    a.w = s.w[i].ptr();
    a.x = x;
    a.x_dtype = xt;
    a.y = y;
    a.act8 = act8;
    a.pdl = true;  // the step's weights are written once, before the step
    a.work = work;
    a.work_bytes = work_bytes;
    const char* name = nullptr;
    if (kq::launch_decode(a, st, &name) != TC_SUCCESS) {
      fmt::print(stderr, "tc bench decode: {}\n", tc_last_error_message());
      return false;
    }
    kernels->insert(fmt::format("{}(K={})", name, a.K));
  }
  return true;
}

// Median ms of one graph launch of the step, or -1.
double time_step(const Step& s, tc_dtype_t fmt, int batch, bool act8, tc_dtype_t xt, const void* x,
                 float* y, const Buffer& work, cudaStream_t st, double seconds,
                 std::set<std::string>* kernels, const std::vector<size_t>& only = {}) {
  const size_t wb = tc_buffer_size(work.b);
  // One step outside the capture first: launch errors surface with their message, and the
  // launchers' one-time setup (shared-memory attributes, occupancy) happens outside it.
  std::set<std::string> ignored;
  if (!queue_step(s, fmt, batch, act8, xt, x, y, work.ptr(), wb, st, &ignored, only) ||
      cudaStreamSynchronize(st) != cudaSuccess)
    return -1;
  return graph_ms(
      st,
      [&] { return queue_step(s, fmt, batch, act8, xt, x, y, work.ptr(), wb, st, kernels, only); },
      seconds);
}

// The same step through the public API: tc_gemv_quantized_async on the tc stream, 129 calls,
// each validated and dispatched (what an engine calling tc gets). With `flags` =
// TC_QUANT_WEIGHTS_CONSTANT (the weights are written once, before the steps) the rows launch
// with PDL as the launcher cells do; without, each kernel waits for the previous one to end.
struct ApiStep {
  tc_context_t* ctx;
  const Step& s;
  tc_dtype_t format;
  const Buffer &x, &y;
  tc_stream_t* stream;
  uint32_t flags;
  tc_dtype_t xt = TC_DTYPE_F32;  // X's type in `x`

  // Queues call i of the step (i < 129).
  bool call(size_t i) const {
    tc_quant_matmul_desc d{};
    d.M = 1;
    d.N = s.shape[i].N;
    d.K = s.shape[i].K;
    d.w_dtype = format;
    d.x_dtype = xt;
    d.y_dtype = TC_DTYPE_F32;
    d.quantize_activations = true;
    d.flags = flags;
    if (tc_gemv_quantized_async(ctx, &d, s.w[i].b, nullptr, x.b, y.b, stream) == TC_SUCCESS)
      return true;
    fmt::print(stderr, "tc bench decode (API): {}\n", tc_last_error_message());
    return false;
  }
  bool queue() const {
    for (size_t i = 0; i < s.w.size(); ++i)
      if (!call(i)) return false;
    return true;
  }
};

// Median ms of a batch-1 step through the API: captured into one CUDA graph (`graph`), or
// queued call by call from the host each step; -1 on failure.
double time_step_api(const ApiStep& a, bool graph, double seconds) {
  auto st = static_cast<cudaStream_t>(tc_stream_native_handle(a.stream));
  if (!a.queue() || tc_stream_sync(a.stream) != TC_SUCCESS) return -1;
  if (!graph)
    return median_ms(
        st, [&](int) { return a.queue(); }, seconds);
  return graph_ms(
      st, [&] { return a.queue(); }, seconds);
}

// Workspace of the f16 MMA bulk kernel: the most any shape of the step needs (it grows with N
// where K is split between CTAs).
// The most any MMA kernel that launch_decode may pick needs for M <= a.M on these shapes: the
// f16 MMA's, and the batched-decode wgmma kernel's (whose split is capped by the workspace it is
// given: a smaller buffer would make the bench run a split the public rows do not; the
// seventh session's review found the 32000-row head at M = 31 / 32 on one split instead of two).
size_t f16_work(kq::Args a, const std::vector<Shape>& shapes) {
  size_t most = 0;
  for (const Shape& sh : shapes) {
    a.N = sh.N;
    a.K = sh.K;
    most = std::max(most, kq::mma_f16_work_bytes_upto(a));
    kq::Args b = a;
    for (b.M = 1; b.M <= std::min(a.M, 32); ++b.M) most = std::max(most, kq::mma_b32_work_bytes(b));
  }
  return most;
}

// The activation cells of a batch: X f32 kept f32 (exact kernels) and quantized to 8 bits on
// the fly (q8 GEMVs, MMA kernels), then X given in f16 / bf16 (o.x), read natively by the
// 8-bit-activation kernels (half the bytes of X per CTA), and X given as Q8_0 blocks (o.x
// "q8_0": what an RMSNorm that quantizes its output would hand the GEMVs; the bulk GEMV dots
// the codes, batches <= 2 as the public rows: no batched kernel reads them).
struct XCell {
  const char* label;
  bool act8;
  tc_dtype_t xt;
};
std::vector<XCell> x_cells(const DecodeBenchOptions& o) {
  std::vector<XCell> cells;
  for (const std::string& x : o.x) {
    if (x == "f32") {
      cells.push_back({"f32", false, TC_DTYPE_F32});
      cells.push_back({"q8", true, TC_DTYPE_F32});
    } else if (x == "f16") {
      cells.push_back({"f16-q8", true, TC_DTYPE_F16});
    } else if (x == "bf16") {
      cells.push_back({"bf16-q8", true, TC_DTYPE_BF16});
    } else if (x == "q8_0") {
      cells.push_back({"q8_0", true, TC_DTYPE_Q8_0});
    }
  }
  return cells;
}

// The kernels a timed cell ran, space-separated, or why it did not run (ms < 0).
std::string kernels_text(const std::set<std::string>& kernels, double ms) {
  if (ms < 0) return "not run: " + std::string(tc_last_error_message());
  std::string ks;
  for (const auto& k : kernels) ks += (ks.empty() ? "" : " ") + k;
  return ks;
}

// --per-shape: each layer shape of the step alone, its o.layers GEMVs in one graph (weights
// rotated through the layers' copies, so they stream from HBM unless those copies fit in L2:
// then the line says so), µs a launch against the streaming time of its weight bytes at the
// copy rate. Alone, a shape's launches follow launches of the same kernel, whose tails their
// weight streams overlap under PDL; in the step they follow another shape's kernel, and the
// per-shape times mispredicted the step by up to 0.14 ms (docs/quant.md, "Fifteenth session").
// So each line also gives the shape's cost in the step, leave-one-out: the whole step's time
// less the step's without that shape's launches (the head and the other shapes kept), per
// launch.
void shape_cells(const Step& s, tc_dtype_t f, const std::string& name, int batch, const XCell& c,
                 const void* xp, const Buffer& y, const Buffer& work, cudaStream_t st,
                 double seconds, double copy, nlohmann::json& doc) {
  constexpr size_t kShapes = std::size(kLayer);
  int dev = 0, l2 = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess)
    l2 = 0;
  std::set<std::string> all_kernels;
  const double full = time_step(s, f, batch, c.act8, c.xt, xp, static_cast<float*>(y.ptr()), work,
                                st, seconds, &all_kernels);
  for (size_t j = 0; j < kShapes; ++j) {
    std::vector<size_t> only, others;
    for (size_t i = 0; i < s.w.size(); ++i)
      (i % kShapes == j && i + 1 < s.w.size() ? only : others).push_back(i);
    std::set<std::string> kernels, ignored;
    const double ms = time_step(s, f, batch, c.act8, c.xt, xp, static_cast<float*>(y.ptr()), work,
                                st, seconds, &kernels, only);
    const double us = ms > 0 ? 1e3 * ms / double(only.size()) : -1;
    const double rest = time_step(s, f, batch, c.act8, c.xt, xp, static_cast<float*>(y.ptr()), work,
                                  st, seconds, &ignored, others);
    const double in_step = full > 0 && rest > 0 ? 1e3 * (full - rest) / double(only.size()) : -1;
    const double bytes = double(tc_buffer_size(s.w[j].b));
    const double ideal = copy > 0 ? bytes / (copy * 1e9) * 1e6 : 0;
    const double gbps = us > 0 ? bytes / us / 1e3 : 0.0;
    const bool in_l2 = double(only.size()) * bytes < 2.0 * l2;  // copies that L2 may hold
    const std::string ks = kernels_text(kernels, ms);
    fmt::print(
        "{:>6} | {:>5} | {:>6} |   shape {}x{}: {:.2f} us a launch, {:.0f} GB/s, streaming "
        "at the copy rate {:.2f} us ({:+.2f}){}; in the step {:.2f} us | {}\n",
        name, batch, c.label, kLayer[j].N, kLayer[j].K, us, gbps, ideal, us - ideal,
        in_l2 ? " (L2-resident: not a streaming time)" : "", in_step, ks);
    doc["shapes"].push_back({{"format", name},
                             {"batch", batch},
                             {"x", c.label},
                             {"act8", c.act8},
                             {"n", kLayer[j].N},
                             {"k", kLayer[j].K},
                             {"us", us},
                             {"gbps", gbps},
                             {"ideal_us", ideal},
                             {"l2_resident", in_l2},
                             {"in_step_us", in_step},
                             {"kernels", ks}});
  }
}

}  // namespace

tc_dtype_t quant_format_from_name(const std::string& name) {
  static const std::map<std::string, tc_dtype_t> m = {{"q4_0", TC_DTYPE_Q4_0},
                                                      {"q8_0", TC_DTYPE_Q8_0},
                                                      {"q4_k", TC_DTYPE_Q4_K},
                                                      {"q6_k", TC_DTYPE_Q6_K}};
  const auto it = m.find(name);
  return it == m.end() ? TC_DTYPE_F32 : it->second;
}

double copy_bandwidth_gbps(tc_context_t* ctx, void* stream) {
  const size_t bytes = size_t(1) << 30;
  Buffer a, b;
  if (!alloc(ctx, bytes, &a) || !alloc(ctx, bytes, &b)) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  cudaMemsetAsync(a.ptr(), 1, bytes, st);
  const double ms = median_ms(
      st,
      [&](int i) {
        void* src = i % 2 ? b.ptr() : a.ptr();
        void* dst = i % 2 ? a.ptr() : b.ptr();
        return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st) == cudaSuccess;
      },
      0.2);
  return ms > 0 ? 2.0 * double(bytes) / (ms * 1e-3) / 1e9 : 0;
}

nlohmann::json run_decode_bench(tc_context_t* ctx, const DecodeBenchOptions& o) {
  nlohmann::json doc = {{"bench", "decode"}, {"cells", nlohmann::json::array()}};
  tc_stream_t* stream = nullptr;
  if (tc_stream_create(ctx, &stream) != TC_SUCCESS) {
    fmt::print(stderr, "tc bench decode: {}\n", tc_last_error_message());
    return doc;
  }
  auto st = static_cast<cudaStream_t>(tc_stream_native_handle(stream));
  const double copy = copy_bandwidth_gbps(ctx, st);
  tc_context_trim(ctx);  // the copy buffers do not count in the peaks below
  doc["copy_gbps"] = copy;
  fmt::print("synthetic Llama-2-7B decode step ({} layers + head), one CUDA graph per step\n",
             o.layers);
  fmt::print("copy bandwidth {:.0f} GB/s (cudaMemcpy D2D of 1 GiB, bytes read + written)\n\n",
             copy);
  fmt::print("{:>6} | {:>5} | {:>6} | {:>8} | {:>8} | {:>7} | {:>6} | kernels\n", "format", "batch",
             "x", "ms/step", "tok/s", "GB/s", "% copy");
  for (const std::string& name : o.formats) {
    const tc_dtype_t f = quant_format_from_name(name);
    Step s;
    for (int l = 0; l < o.layers; ++l)
      for (const Shape& sh : kLayer) s.shape.push_back(sh);
    s.shape.push_back(kHead);
    // work: X as int8 / f16 for the MMA bulk kernels (the largest K at batch 32).
    Buffer x, xh, xq, y, work;
    kq::Args wa;
    wa.M = kMaxBatch;
    wa.K = 11008;
    wa.w_dtype = f;
    bool ok = alloc(ctx, size_t(kMaxBatch) * 11008 * 4, &x) &&
              alloc(ctx, size_t(kMaxBatch) * 11008 * 2, &xh) &&
              alloc(ctx, tc_quant_row_bytes(TC_DTYPE_Q8_0, 11008) * kMaxBatch, &xq) &&
              alloc(ctx, size_t(kMaxBatch) * kHead.N * 4, &y) &&
              alloc(ctx, std::max(kq::mma_bulk_work_bytes(wa), f16_work(wa, s.shape)), &work);
    for (size_t i = 0; ok && i < s.shape.size(); ++i) {
      const size_t bytes = tc_quant_row_bytes(f, s.shape[i].K) * s.shape[i].N;
      s.w.emplace_back();
      ok = alloc(ctx, bytes, &s.w.back()) &&
           kq::launch_fill_random_blocks(f, s.w.back().ptr(), s.shape[i].N, s.shape[i].K, i + 1,
                                         st) == TC_SUCCESS;
      s.weight_bytes += bytes;
    }
    // Q8_0 X: valid blocks back to back, so any K (a multiple of 32) reads whole blocks.
    ok = ok &&
         fill_random(x.ptr(), TC_DTYPE_F32, size_t(kMaxBatch) * 11008, 5, st) == cudaSuccess &&
         kq::launch_fill_random_blocks(TC_DTYPE_Q8_0, xq.ptr(), kMaxBatch, 11008, 9, st) ==
             TC_SUCCESS &&
         cudaStreamSynchronize(st) == cudaSuccess;
    if (!ok) {
      fmt::print(stderr, "tc bench decode: {}: setup failed: {}\n", name, tc_last_error_message());
      continue;
    }
    for (const XCell& c : x_cells(o)) {
      const void* xp = c.xt == TC_DTYPE_Q8_0 ? xq.ptr() : x.ptr();
      if (c.xt == TC_DTYPE_F16 || c.xt == TC_DTYPE_BF16) {  // the same shape of X in half
                                                            // precision (fresh values)
        if (fill_random(xh.ptr(), c.xt, size_t(kMaxBatch) * 11008, 7, st) != cudaSuccess) {
          fmt::print(stderr, "tc bench decode: {}: filling X in {} failed\n", name, c.label);
          continue;
        }
        xp = xh.ptr();
      }
      for (int batch : o.batches) {
        // The public rows read Q8_0 X natively up to M = 2 (the bulk GEMV row); past that they
        // dequantize it first, which launch_decode (the kernels alone) does not model.
        if (c.xt == TC_DTYPE_Q8_0 && batch > 2) continue;
        std::set<std::string> kernels;
        const double ms = time_step(s, f, batch, c.act8, c.xt, xp, static_cast<float*>(y.ptr()),
                                    work, st, o.seconds, &kernels);
        const double gbps = ms > 0 ? double(s.weight_bytes) / (ms * 1e-3) / 1e9 : 0;
        const double tok = ms > 0 ? batch * 1e3 / ms : 0.0;
        const std::string ks = kernels_text(kernels, ms);
        fmt::print("{:>6} | {:>5} | {:>6} | {:>8.3f} | {:>8.1f} | {:>7.0f} | {:>5.1f}% | {}\n",
                   name, batch, c.label, ms, tok, gbps, copy > 0 ? 100 * gbps / copy : 0.0, ks);
        doc["cells"].push_back({{"format", name},
                                {"batch", batch},
                                {"act8", c.act8},
                                {"x", c.label},
                                {"ms", ms},
                                {"tok_s", tok},
                                {"gbps", gbps},
                                {"copy_share", copy > 0 ? gbps / copy : 0.0},
                                {"kernels", ks}});
        if (o.per_shape) shape_cells(s, f, name, batch, c, xp, y, work, st, o.seconds, copy, doc);
      }
    }
    // Batch 1 with 8-bit activations through the public API (its rows keep their scratch in
    // the stream's workspace, so the calls can be captured): the graph and call by call, with
    // TC_QUANT_WEIGHTS_CONSTANT (PDL, as the launcher cells) and without (the same-run A/B);
    // the queued rows also give the host microseconds per call (a burst of calls while the
    // GPU queue absorbs them). With X in half precision (o.x): the graph with the flag, X read
    // as it is by the bulk GEMV.
    if (std::find(o.batches.begin(), o.batches.end(), 1) != o.batches.end()) {
      struct ApiCell {
        XCell x;
        uint32_t flags;
        bool graph;
      };
      std::vector<ApiCell> api_cells;
      for (const uint32_t flags : {uint32_t(TC_QUANT_WEIGHTS_CONSTANT), 0u})
        for (bool graph : {true, false})
          api_cells.push_back({{"q8", true, TC_DTYPE_F32}, flags, graph});
      for (const XCell& c : x_cells(o))
        if (c.xt != TC_DTYPE_F32) api_cells.push_back({c, TC_QUANT_WEIGHTS_CONSTANT, true});
      for (const ApiCell& c : api_cells) {
        const bool half = c.x.xt == TC_DTYPE_F16 || c.x.xt == TC_DTYPE_BF16, graph = c.graph;
        if (half &&
            fill_random(xh.ptr(), c.x.xt, size_t(kMaxBatch) * 11008, 7, st) != cudaSuccess) {
          fmt::print(stderr, "tc bench decode: {}: filling X for the API cells failed\n", name);
          continue;
        }
        const ApiStep api{ctx, s,      f,       half ? xh : c.x.xt == TC_DTYPE_Q8_0 ? xq : x,
                          y,   stream, c.flags, c.x.xt};
        const double ms = time_step_api(api, graph, o.seconds);
        double host_us = -1;
        if (!graph)
          host_us = host_us_per_call(st, [&](int i) { return api.call(size_t(i) % s.w.size()); });
        const double gbps = ms > 0 ? double(s.weight_bytes) / (ms * 1e-3) / 1e9 : 0;
        const double tok = ms > 0 ? 1e3 / ms : 0.0;
        const std::string how =
            fmt::format("public API: tc_gemv_quantized_async x129, {}, {}{}",
                        graph ? "one CUDA graph" : "queued per step",
                        c.flags ? "TC_QUANT_WEIGHTS_CONSTANT (PDL)" : "no flag (no PDL)",
                        graph ? "" : fmt::format(", host {:.2f} us/call", host_us));
        fmt::print("{:>6} | {:>5} | {:>6} | {:>8.3f} | {:>8.1f} | {:>7.0f} | {:>5.1f}% | {}\n",
                   name, 1, c.x.label, ms, tok, gbps, copy > 0 ? 100 * gbps / copy : 0.0, how);
        doc["cells"].push_back({{"format", name},
                                {"batch", 1},
                                {"act8", true},
                                {"x", c.x.label},
                                {"api", graph ? "graph" : "queued"},
                                {"weights_constant", c.flags != 0},
                                {"host_us_per_call", host_us},
                                {"ms", ms},
                                {"tok_s", tok},
                                {"gbps", gbps},
                                {"copy_share", copy > 0 ? gbps / copy : 0.0}});
      }
    }
    uint64_t live = 0, held = 0, peak = 0;
    tc_context_memory_stats(ctx, &live, &held, &peak);
    const double act = double(tc_buffer_size(x.b) + tc_buffer_size(xh.b) + tc_buffer_size(xq.b) +
                              tc_buffer_size(y.b) + tc_buffer_size(work.b));
    const double limit = 1.05 * double(s.weight_bytes) + act;
    fmt::print(
        "{:>6}   peak device memory {:.3f} GB: weights {:.3f} GB + activations {:.1f} MB "
        "-> {:.2f}% over the weights ({} the +5% bound)\n",
        name, peak / 1e9, s.weight_bytes / 1e9, act / 1e6,
        100.0 * (double(peak) - act - double(s.weight_bytes)) / double(s.weight_bytes),
        double(peak) <= limit ? "within" : "OVER");
    doc["memory"][name] = {{"peak", peak}, {"weights", s.weight_bytes}, {"activations", act}};
    s.w.clear();
    x.reset();
    xh.reset();
    xq.reset();
    y.reset();
    work.reset();
    tc_context_trim(ctx);
  }
  tc_stream_destroy(stream);
  return doc;
}

}  // namespace tc::bench
