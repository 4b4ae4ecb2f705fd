#include "core/autotune.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/env.h"

namespace tc::autotune {
namespace {

// The per-call memo: a class packed in one integer (class_of) and the device key, to the
// entry's row name (interned, so a hit copies no string) and variant.
struct Memo {
  std::string device;
  std::optional<Hit> hit;
};

// The environment values that decide the cache's location, to notice a change without
// building the path on every call.
struct Location {
  std::optional<std::string> cache, xdg, home;
  static bool same(const std::optional<std::string>& v, const char* now) {
    return now == nullptr || *now == '\0' ? !v.has_value() : v.has_value() && *v == now;
  }
  bool unchanged() const {
    return same(cache, std::getenv("TC_AUTOTUNE_CACHE")) &&
           same(xdg, std::getenv("XDG_CACHE_HOME")) && same(home, std::getenv("HOME"));
  }
  static Location now() {
    return {env::get("TC_AUTOTUNE_CACHE"), env::get("XDG_CACHE_HOME"), env::get("HOME")};
  }
};

struct Cache {
  std::mutex mu;
  std::string path;  // the file `entries` was loaded from
  Location location;
  bool loaded = false;
  std::map<std::string, Entry> entries;
  std::unordered_map<uint64_t, std::vector<Memo>> memo;  // cleared on every change
  std::unordered_set<std::string> names;                 // interned row names, kept
};

Cache& cache() {
  static Cache c;
  return c;
}

std::atomic<uint64_t> g_generation{0};

// Under the cache's lock, whenever entries change or are reloaded.
void changed(Cache& c) {
  c.memo.clear();
  g_generation.fetch_add(1, std::memory_order_acq_rel);
}

std::map<std::string, Entry> read_file(const std::string& path) {
  std::map<std::string, Entry> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  if (!in) return out;
  std::stringstream ss;
  ss << in.rdbuf();
  if (!parse(ss.str(), &out))
    log_debug(fmt::format("autotune: {} is malformed; its bad entries are ignored", path));
  return out;
}

void load_locked(Cache& c) {
  if (c.loaded && c.location.unchanged()) return;
  c.location = Location::now();
  std::string path = cache_path();
  if (c.loaded && path == c.path) return;
  c.path = path;
  c.entries = read_file(path);
  changed(c);
  c.loaded = true;
}

uint64_t pow2_ceil(int64_t x) {
  return std::bit_ceil(uint64_t(x < 1 ? 1 : x));
}

// A dimension's class: exact up to 32, then the next multiple of 8 up to 64, beyond that the
// next power of two. Small M are decode batches, where the best kernel changes within a few
// rows: cuBLASLt's best algorithm for M = 17..24 lost 12% at M = 25..32 with W 4096x4096, and
// the skinny kernel tuned at M = 9 served M = 13..16 on W 14336x4096 at 0.91-0.93x of
// cuBLASLt (H200, 2026-11-29), so each M up to 32 is tuned on its own.
uint64_t bucket(int64_t x) {
  if (x <= 32) return uint64_t(std::max<int64_t>(x, 1));
  return x <= 64 ? uint64_t((x + 7) / 8 * 8) : pow2_ceil(x);
}

// bucket() as a small code (6 bits): 1..32 as is, 33..36 for 40..64, then 37, 38, ... for
// 128, 256, ... (2^31 is 61).
uint64_t bucket_code(int64_t x) {
  const uint64_t b = bucket(x);
  if (b <= 32) return b;
  return b <= 64 ? 32 + (b - 32) / 8 : 36 + uint64_t(std::countr_zero(b)) - 6;
}

// M or N beyond 64 that leaves the last 128-wide tile partial: its own class, since the best
// kernel differs from that of the full power of two (H200, 18:27 UTC: 1000^3 bf16 ran the own
// wgmma variant tuned at 1024^3 at 174 TFLOP/s, where cuBLASLt reached 224).
bool ragged(int64_t x) {
  return x > 64 && x % 128 != 0;
}

// The meaning of a stored variant number: bumped when a row's candidate list changes, so a cache
// written before names no other candidate. 2: cuBLASLt's list starts with a direct caller's
// algorithm (every reduction scheme asked for), 2026-11-29.
constexpr int kCandidateLists = 2;

uint64_t log2_ceil(int64_t x) {
  return uint64_t(std::countr_zero(pow2_ceil(x)));
}

// 16-byte pitches and bases: what TMA and 128-bit loads need.
bool aligned16(const void* p, int64_t ld, int64_t stride, size_t esz) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (ld * int64_t(esz)) % 16 == 0 &&
         (stride * int64_t(esz)) % 16 == 0;
}

// Operand `which` (0 = A, 1 = B, 2 = C) has a 16-byte aligned base, pitch and batch stride.
bool aligned_bits(const GemmProblem& p, int which) {
  const tc_gemm_desc& d = p.d;
  const bool batched = p.batch > 1;
  switch (which) {
    case 0:
      return aligned16(p.a, d.lda, batched ? p.stride_a : 0, tc_dtype_size(d.a_dtype));
    case 1:
      return aligned16(p.b, d.ldb, batched ? p.stride_b : 0, tc_dtype_size(d.b_dtype));
    default:
      return aligned16(p.c, d.ldc, batched ? p.stride_c : 0, tc_dtype_size(d.c_dtype));
  }
}

uint64_t class_of(const GemmProblem& p) {
  const tc_gemm_desc& d = p.d;
  uint64_t k = 0;
  auto put = [&](uint64_t v, int bits) { k = (k << bits) | (v & ((uint64_t(1) << bits) - 1)); };
  put(uint64_t(d.a_dtype), 5), put(uint64_t(d.b_dtype), 5), put(uint64_t(d.c_dtype), 5);
  put(uint64_t(d.accum_dtype), 5), put(d.transpose_a, 1), put(d.transpose_b, 1);
  put(bucket_code(d.M), 6), put(bucket_code(d.N), 6), put(bucket_code(d.K), 6);
  put(ragged(d.M), 1), put(ragged(d.N), 1);
  put(log2_ceil(p.batch), 5);
  for (int i = 0; i < 3; ++i) put(aligned_bits(p, i), 1);
  put(d.beta != 0.0f, 1);
  return k;
}

}  // namespace

bool enabled_value(const char* v) {
  if (v == nullptr || *v == '\0') return true;
  return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "OFF") == 0 ||
           std::strcmp(v, "false") == 0);
}

bool enabled() {
  return enabled_value(std::getenv("TC_AUTOTUNE"));
}

uint64_t generation() {
  return g_generation.load(std::memory_order_acquire);
}

std::string cache_path() {
  if (auto p = env::get("TC_AUTOTUNE_CACHE")) return *p;
  if (auto x = env::get("XDG_CACHE_HOME")) return *x + "/tc/autotune.json";
  if (auto h = env::get("HOME")) return *h + "/.cache/tc/autotune.json";
  return "";
}

std::string gemm_key(const GemmProblem& p, const std::string& device_key) {
  const tc_gemm_desc& d = p.d;
  std::string align;
  align += aligned_bits(p, 0) ? 'a' : '-';
  align += aligned_bits(p, 1) ? 'b' : '-';
  align += aligned_bits(p, 2) ? 'c' : '-';
  return fmt::format(
      "gemm {},{}->{} acc {} {}{} m{}{} n{}{} k{} b{} {} beta{} | {} | tc {} cand {}",
      tc_dtype_name(d.a_dtype), tc_dtype_name(d.b_dtype), tc_dtype_name(d.c_dtype),
      tc_dtype_name(d.accum_dtype), d.transpose_a ? 'T' : 'N', d.transpose_b ? 'T' : 'N',
      bucket(d.M), ragged(d.M) ? "+" : "", bucket(d.N), ragged(d.N) ? "+" : "", bucket(d.K),
      pow2_ceil(p.batch), align, d.beta != 0.0f ? 1 : 0, device_key, tc_version_string(),
      kCandidateLists);
}

std::optional<Entry> lookup(const std::string& key) {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  load_locked(c);
  auto it = c.entries.find(key);
  if (it == c.entries.end()) return std::nullopt;
  return it->second;
}

void store(const std::string& key, const Entry& entry) {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  load_locked(c);
  c.entries[key] = entry;
  changed(c);
  if (c.path.empty()) return;
  // Merge what other processes stored since we loaded, ours winning on the same key.
  std::map<std::string, Entry> merged = read_file(c.path);
  for (auto& [k, e] : c.entries) merged[k] = e;
  c.entries = merged;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target(c.path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  static std::atomic<unsigned> serial{0};
  const std::string tmp = fmt::format("{}.tmp.{}.{}", c.path, getpid(), serial++);
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << serialize(merged);
    out.flush();
    if (!out) {
      log_debug(fmt::format("autotune: cannot write {}", tmp));
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, target, ec);  // atomic on POSIX: readers see the old or the new file
  if (ec) {
    log_debug(fmt::format("autotune: cannot rename {} to {}: {}", tmp, c.path, ec.message()));
    fs::remove(tmp, ec);
  }
}

std::optional<Hit> lookup(const GemmProblem& p, const std::string& device_key) {
  Cache& c = cache();
  const uint64_t cls = class_of(p);
  std::lock_guard lock(c.mu);
  load_locked(c);
  std::vector<Memo>& slot = c.memo[cls];
  for (const Memo& m : slot)
    if (m.device == device_key) return m.hit;
  std::optional<Hit> hit;
  auto found = c.entries.find(gemm_key(p, device_key));
  if (found != c.entries.end())
    hit = Hit{c.names.insert(found->second.row).first->c_str(), found->second.variant};
  slot.push_back({device_key, hit});
  return hit;
}

void store(const GemmProblem& p, const std::string& device_key, const Entry& entry) {
  store(gemm_key(p, device_key), entry);
}

// Why the reference margin is 5%: the tuner's paired timings and the benchmark's long
// back-to-back runs disagree on some pairs of kernels by more than the timings' noise, for a
// reason not yet known (not the tuner's batch length: 2 ms batches, the bench's, chose the same
// rows as 0.5 ms ones, H200 20:41 UTC, docs/gemm.md). In
// tc bench gemm on the H200 (2026-11-29 20:10 UTC, each pair measured in alternating batches),
// cuBLASLt's 2nd algorithm for f16 M = 11, 14, 15 x W 14336x4096 had won its tuning against
// the 1st (the direct caller's) by more than the 1% rule (about 1.5-4.5%) and then ran 5%
// slower than it; the own wgmma kernel tuned level with it on bf16 8192x128x8192 and ran 7%
// slower. With 1% those cells read
// 0.93-0.95x; with 5% a pick needs a misprediction of more than 7% to land below 0.98x, and
// what it gives up is wins of under 5% (the same run: 1-4% on decode M = 17..32 x 14336x4096,
// 3-4% at f16 / bf16 8192^3, 2-3% for own kernels at 2048^3).
int choose(std::vector<Timed>& cands, const std::function<double(const Timed&)>& retime,
           std::string* log) {
  if (cands.empty()) return -1;
  int ref = -1;
  for (size_t i = 0; i < cands.size() && ref < 0; ++i)
    if (cands[i].row->backend == TC_BACKEND_CUBLASLT && cands[i].variant == 0) ref = int(i);
  double fastest = cands[0].ms;
  for (const Timed& c : cands) fastest = std::min(fastest, c.ms);
  std::vector<size_t> near;
  for (size_t i = 0; i < cands.size(); ++i) {
    const double band = int(i) == ref ? kRetimeBand + kReferenceMargin : kRetimeBand;
    if (cands[i].ms <= fastest * (1 + band)) near.push_back(i);
  }
  std::vector<bool> again(cands.size(), false);
  if (near.size() > 1) {
    if (log) *log += "; again:";
    for (auto it = near.rbegin(); it != near.rend(); ++it) {
      Timed& c = cands[*it];
      const double ms = retime(c);
      if (log) *log += fmt::format(" {}#{}={:.4f}ms", c.row->name, c.variant, ms);
      if (ms > 0) c.ms = (c.ms + ms) / 2;
      again[*it] = true;
    }
  }
  int best = 0;
  for (size_t i = 1; i < cands.size(); ++i)
    if (cands[i].ms < cands[size_t(best)].ms * (1 - kMargin)) best = int(i);
  if (ref < 0 || best == ref) return best;
  const double bar = cands[size_t(ref)].ms * (1 - kReferenceMargin);
  if (!(cands[size_t(best)].ms < bar)) return ref;
  // A pick far ahead of every other candidate was timed once (no near tie): it must beat the
  // reference again before it replaces it (H200 2026-11-30 03:02 UTC: 64x64-tile variants timed
  // 8.1 and 12.1 us on decode shapes where the bench then ran them at 16.9 and 16.4 us).
  if (!again[size_t(best)]) {
    const double ms = retime(cands[size_t(best)]);
    if (log)
      *log += fmt::format("; confirm: {}#{}={:.4f}ms", cands[size_t(best)].row->name,
                          cands[size_t(best)].variant, ms);
    if (ms > 0 && !(ms < bar)) return ref;
  }
  return best;
}

bool parse(const std::string& text, std::map<std::string, Entry>* out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("entries") || !j["entries"].is_object())
    return false;
  bool ok = j.value("format", 0) == 1;
  for (auto& [key, v] : j["entries"].items()) {
    if (!v.is_object() || !v.contains("row") || !v["row"].is_string() || !v.contains("variant") ||
        !v["variant"].is_number_integer()) {
      ok = false;
      continue;
    }
    Entry e;
    e.row = v["row"].get<std::string>();
    e.variant = v["variant"].get<int>();
    e.ms = v.contains("ms") && v["ms"].is_number() ? v["ms"].get<double>() : 0.0;
    if (v.contains("timings") && v["timings"].is_string())
      e.timings = v["timings"].get<std::string>();
    if (e.variant < 0) {
      ok = false;
      continue;
    }
    (*out)[key] = e;
  }
  return ok;
}

std::string serialize(const std::map<std::string, Entry>& entries) {
  nlohmann::json j;
  j["format"] = 1;
  j["entries"] = nlohmann::json::object();
  for (auto& [k, e] : entries) {
    j["entries"][k] = {{"row", e.row}, {"variant", e.variant}, {"ms", e.ms}};
    if (!e.timings.empty()) j["entries"][k]["timings"] = e.timings;
  }
  return j.dump(1) + "\n";
}

}  // namespace tc::autotune
