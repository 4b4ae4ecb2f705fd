// The autotune cache: which dispatch row (and which of its variants) won the timing for a
// problem class on a device. The first call of a class on a device that can time candidates
// (a GemmTimer: CUDA) times every row that can serve it and stores the winner here and on disk;
// later calls, in this process or the next, go straight to it.
//
// Key: op, dtypes, transposes, shape class (M, N, K exact up to 32, rounded up to a multiple of 8
// up to 64 and to a power of two beyond; batch to a power of two),
// operand alignment (TMA and vector loads need 16-byte pitches), device ("NVIDIA H200 sm_90
// 132 SMs cublasLt 130000"), tc's version and the revision of the rows' candidate lists ("cand
// 2"), so a new library, GPU or candidate list never reads stale winners.
// File: TC_AUTOTUNE_CACHE, else $XDG_CACHE_HOME/tc/autotune.json, else ~/.cache/tc/autotune.json;
// JSON {"format": 1, "entries": {key: {"row", "variant", "ms"}}}; rewritten atomically (temp file
// + rename) after merging what other processes wrote meanwhile. TC_AUTOTUNE=0 disables lookups
// and tuning (the static ladder of gemm_table.cpp decides).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dispatch.h"

namespace tc {

// Implemented by devices that can time GEMM candidates (the CUDA device). Core code reaches it
// with dynamic_cast on the context's DeviceImpl, so no backend type appears here.
class GemmTimer {
 public:
  virtual ~GemmTimer() = default;
  // Identifies the device and the versions of the libraries it runs, for cache keys.
  virtual const std::string& device_key() const = 0;
  // How many variants `row` offers for `p` (cuBLASLt: its top heuristic algorithms), >= 1.
  virtual int gemm_variants(const GemmProblem& p, const GemmRow& row) = 0;
  // Median milliseconds of one run of `row` (variant `variant`) on `p`, writing a scratch copy
  // of C, never C itself; negative when the candidate failed.
  virtual double time_gemm(const GemmProblem& p, const GemmRow& row, int variant) = 0;
};

namespace autotune {

struct Entry {
  std::string row;
  int variant = 0;
  double ms = 0;
  // Every candidate's time in this tuning ("row#variant=ms ..."), kept in the file for whoever
  // asks why a row won (not read back for any decision).
  std::string timings{};
};

// What a call needs of an entry: the row's name (valid for the process) and the variant.
struct Hit {
  const char* row;
  int variant;
};

bool enabled();                         // TC_AUTOTUNE is not "0" / "off" / "false"
bool enabled_value(const char* value);  // the same test on a value read already (nullptr: unset)
// Changes whenever a lookup may answer differently than before (a store, another file loaded):
// decisions remembered from earlier lookups (dispatch.cpp) are kept under it.
uint64_t generation();
std::string cache_path();  // "" when no location is known (no HOME)
std::string gemm_key(const GemmProblem& p, const std::string& device_key);

// Lookups load the file on first use (and again when TC_AUTOTUNE_CACHE changes).
std::optional<Entry> lookup(const std::string& key);
// Records in memory and rewrites the file; I/O errors are logged (TC_LOG=debug), not raised:
// a read-only cache folder only costs tuning again in the next process.
void store(const std::string& key, const Entry& entry);

// The per-call path: the answer for p's class is remembered in memory under a packed integer
// form of the class, so the text key is formatted only the first time a class is seen (a call
// costs a hash lookup, not a string format).
std::optional<Hit> lookup(const GemmProblem& p, const std::string& device_key);
void store(const GemmProblem& p, const std::string& device_key, const Entry& entry);

// One timed candidate of a tuning (dispatch.cpp's tune), in ladder order: rows as in the table,
// each row's variants in order.
struct Timed {
  const GemmRow* row;
  int variant;
  double ms;  // > 0
};

// The tuner's decision over the timed candidates; returns the winner's index, or -1 when there
// is none. The reference is the first cuBLASLt row's variant 0: the algorithm an application
// calling cuBLASLt directly runs (gemm_cublaslt.h).
//  1. Candidates within kRetimeBand of the fastest, and the reference when within
//     kRetimeBand + kReferenceMargin of it, are timed again by `retime` in reverse order and
//     keep the mean of both timings (a linear drift of the GPU's speed then weighs on all alike;
//     a failed second timing keeps the first).
//  2. Ladder rule: an earlier candidate keeps its place unless a later one is more than kMargin
//     faster, so noise does not flip near-equal candidates from one process to the next.
//  3. The ladder's pick replaces the reference only when it is more than kReferenceMargin faster
//     than the reference; otherwise the reference runs, which performs as the direct call does.
//  4. A pick that step 1 did not time again is timed again now and must beat the reference by
//     the margin in that timing too (a failed timing keeps the first); a one-off fast timing
//     then cannot replace the reference.
// `log` (may be null) receives the second timings.
inline constexpr double kRetimeBand = 0.03, kMargin = 0.01, kReferenceMargin = 0.05;
int choose(std::vector<Timed>& cands, const std::function<double(const Timed&)>& retime,
           std::string* log);

// The file format, exposed for tests. parse() returns false on malformed text (entries that
// are well-formed are still returned).
bool parse(const std::string& text, std::map<std::string, Entry>* out);
std::string serialize(const std::map<std::string, Entry>& entries);

}  // namespace autotune
}  // namespace tc
