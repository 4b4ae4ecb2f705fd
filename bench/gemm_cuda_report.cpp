// Tables and JSON of the CUDA GEMM benchmark. Ratios are throughput ratios (peer time / our
// time): above 1 means tc is faster.
#include <fmt/format.h>

#include <algorithm>

#include "gemm_cuda_bench.h"

namespace tc::bench {
namespace {

std::string num(double v) {
  return v > 0 ? fmt::format("{:.1f}", v) : "-";
}
std::string ratio(double ours_ms, double peer_ms) {
  return ours_ms > 0 && peer_ms > 0 ? fmt::format("{:.2f}", peer_ms / ours_ms) : "-";
}

}  // namespace

bool CellResult::same_algo_as_peer() const {
  const std::string tag = "_" + peer_algo;
  return backend == "cublaslt" && !peer_algo.empty() && instance.size() > tag.size() &&
         instance.compare(instance.size() - tag.size(), tag.size(), tag) == 0;
}

void print_table(const std::string& table, const std::vector<CellResult>& cells, bool vs_peer) {
  const bool bw = !cells.empty() && cells.front().c.bandwidth;
  const char* unit = bw ? "GB/s of weights" : "TFLOP/s (TOP/s for i8)";
  fmt::print("\n== {}: {}; tc = dispatch (autotuned), own = tc's kernels (static ladder){}\n",
             table, unit, vs_peer ? ", cuBLASLt called directly; x = cuBLASLt time / ours" : "");
  fmt::print("{:<28} {:>8} {:<9} {:>8}", "case", "tc", "backend", "own");
  if (vs_peer) fmt::print(" {:>9} {:>6} {:>6}", "cuBLASLt", "x tc", "x own");
  fmt::print(" {:>9} {:>11}  {}\n", "peak MiB", "host us/call",
             "instance (tc; own when different)");
  uint64_t peak = 0, tune_peak = 0;
  const CellResult* largest = nullptr;
  std::vector<double> first_ms;
  const CellResult* slowest_first = nullptr;
  for (const CellResult& r : cells) {
    if (!r.error.empty()) {
      fmt::print("{:<28} error: {}\n", r.c.label, r.error);
      continue;
    }
    fmt::print("{:<28} {:>8} {:<9} {:>8}", r.c.label, num(r.value(r.tc_ms)), r.backend,
               num(r.value(r.own_ms)));
    if (vs_peer)
      fmt::print(" {:>9} {:>6} {:>6}", num(r.value(r.peer_ms)), ratio(r.tc_ms, r.peer_ms),
                 ratio(r.own_ms, r.peer_ms));
    std::string inst = r.instance;
    if (!r.own_instance.empty() && r.own_instance != r.instance) inst += " ; " + r.own_instance;
    if (vs_peer && r.peer_ms < 0 && !r.peer_error.empty()) inst += " (peer: " + r.peer_error + ")";
    if (vs_peer && r.backend == "cublaslt" && !r.peer_algo.empty())
      inst += r.same_algo_as_peer() ? " (= peer)" : " (peer " + r.peer_algo + ")";
    const std::string host =
        r.tc_host_us > 0 ? fmt::format("{:.1f}/{}", r.tc_host_us,
                                       r.peer_host_us > 0 ? fmt::format("{:.1f}", r.peer_host_us)
                                                          : std::string("-"))
                         : std::string("-");
    fmt::print(" {:>9.1f} {:>11}  {}\n", r.peak_bytes / double(1 << 20), host, inst);
    if (r.peak_bytes > peak) peak = r.peak_bytes, largest = &r;
    tune_peak = std::max(tune_peak, r.tune_peak_bytes);
    if (r.first_call_ms > 0) {
      first_ms.push_back(r.first_call_ms);
      if (!slowest_first || r.first_call_ms > slowest_first->first_call_ms) slowest_first = &r;
    }
  }
  if (largest)
    fmt::print(
        "peak device memory held by tc in this table: {:.1f} MiB ({}: buffers {:.1f} MiB "
        "in {} rotated copies, workspace and autotune scratch {:.1f} MiB)\n",
        peak / double(1 << 20), largest->c.label, largest->buffer_bytes / double(1 << 20),
        largest->sets,
        (double(largest->peak_bytes) - double(largest->buffer_bytes)) / double(1 << 20));
  if (slowest_first) {
    std::sort(first_ms.begin(), first_ms.end());
    double sum = 0;
    for (double x : first_ms) sum += x;
    fmt::print(
        "first call of each case (autotuning when the class is new): median {:.1f} ms, "
        "total {:.0f} ms, longest {:.1f} ms ({})\n",
        first_ms[first_ms.size() / 2], sum, slowest_first->first_call_ms, slowest_first->c.label);
  }
  std::fflush(stdout);
}

nlohmann::json cell_json(const CellResult& r) {
  const GemmCase& c = r.c;
  nlohmann::json j = {
      {"table", c.table}, {"label", c.label},
      {"dtype", c.dtype}, {"M", c.M},
      {"N", c.N},         {"K", c.K},
      {"batch", c.batch}, {"ta", c.ta},
      {"tb", c.tb},       {"unit", c.bandwidth ? "GB/s" : (c.dtype == "i8" ? "TOP/s" : "TFLOP/s")}};
  if (!r.error.empty()) {
    j["error"] = r.error;
    return j;
  }
  auto v = [](double x) { return x > 0 ? nlohmann::json(x) : nlohmann::json(nullptr); };
  j.update({{"tc_ms", v(r.tc_ms)},
            {"tc", v(r.value(r.tc_ms))},
            {"backend", r.backend},
            {"instance", r.instance},
            {"own_ms", v(r.own_ms)},
            {"own", v(r.value(r.own_ms))},
            {"own_instance", r.own_instance},
            {"peer_ms", v(r.peer_ms)},
            {"peer", v(r.value(r.peer_ms))},
            {"ratio", r.tc_ms > 0 && r.peer_ms > 0 ? v(r.peer_ms / r.tc_ms) : nullptr},
            {"own_ratio", r.own_ms > 0 && r.peer_ms > 0 ? v(r.peer_ms / r.own_ms) : nullptr},
            {"tc_host_us_per_call", v(r.tc_host_us)},
            {"peer_host_us_per_call", v(r.peer_host_us)},
            {"peer_algo", r.peer_algo},
            {"same_algo_as_peer", r.same_algo_as_peer()},
            {"first_call_ms", v(r.first_call_ms)},
            {"peak_device_bytes", r.peak_bytes},
            {"tune_peak_device_bytes", r.tune_peak_bytes},
            {"buffer_bytes", r.buffer_bytes},
            {"rotated_copies", r.sets}});
  if (!r.peer_error.empty()) j["peer_error"] = r.peer_error;
  return j;
}

}  // namespace tc::bench
