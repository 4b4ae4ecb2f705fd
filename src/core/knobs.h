// The TC_* knobs that the dispatch (TC_GEMM_ROW, TC_AUTOTUNE, TC_LOG: core/dispatch_memo.h), the
// CUDA GEMM path and the quantized CUDA kernels (bulk GEMV, f16 MMA and its X-in-registers form,
// batched-decode wgmma, fused prefill) read on every call (planners, launchers), cached per
// thread. A 256^3 GEMM is launch bound: a dozen getenv calls per call (each a scan of the
// environment with a string comparison per entry) were about a microsecond of its ~5 us of host
// time. Here a knob read is an array load, and the cache follows the environment by itself:
//   - refresh() hashes the addresses of the environment's TC_* entries and of HOME /
//     XDG_CACHE_HOME (which locate the autotune cache), checking three bytes of each entry, and
//     reads every knob again with getenv only when that hash changed. setenv() and unsetenv()
//     of such a variable always change the hash (glibc gives each distinct "NAME=value" its own
//     string and never frees one; a value set back returns to its earlier string and hash);
//     other variables do not touch it. So a test or a lab that sets a knob between two calls
//     needs no reload hook. A knob edited in place in a putenv()'d buffer is not noticed (POSIX
//     leaves that unspecified).
//   - get() outside a Scope refreshes first (correct anywhere, e.g. a planner called directly by
//     a test); inside a Scope (the API's GEMM and quantized entry points, the bulk GEMV row's
//     run, the dispatch's read of its knobs) the Scope refreshed once and get() only loads. The
//     environment must not change while a Scope is open on the thread (it never does inside a
//     tc call).
// Header-only and trivially initialized thread-local state (no TLS guard on access), so every
// binary that compiles a planner (libtc, the ping-pong test, the lab) has its own working copy.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tc::knobs {

enum Id : int {
  kGemmRow,             // TC_GEMM_ROW=PREFIX: force a GEMM row (core/dispatch_memo.h)
  kAutotune,            // TC_AUTOTUNE=0: the static ladder
  kLog,                 // TC_LOG=debug: log every decision
  kGemmPdl,             // TC_GEMM_PDL=0: no programmatic dependent launch (gemm_launch_pdl.h)
  kWgmmaEpilogue,       // TC_WGMMA_EPILOGUE=direct: no TMA-store epilogue (wgmma, tf32x3)
  kWgmmaSwap,           // TC_WGMMA_SWAP=1 / 0: force / forbid the swapped orientation
  kWgmmaVariant,        // TC_WGMMA_VARIANT=n: a fixed variant in place of the heuristic
  kWgmmaClusterSplitk,  // TC_WGMMA_CLUSTER_SPLITK=1: in-cluster split-K
  kWgmmaPack128,        // TC_WGMMA_PACK128=1 / 0: force / forbid 128-byte re-pitching
  kWgmmaPack,           // TC_WGMMA_PACK=vec: the vectorized re-pitching copy
  kUse128Tile,          // TC_USE_128_TILE=1: the 128 x 256 tile
  kS8Pingpong,          // TC_S8_PINGPONG=1 / 0: int8 ping-pong kernel always / never
  kSkinnyBulk,          // TC_SKINNY_BULK=1 / 0
  kSkinnyPrefetch,      // TC_SKINNY_PREFETCH=1
  kSkinnyPersist,       // TC_SKINNY_PERSIST=1
  kSkinnyBulkPrefetch,  // TC_SKINNY_BULK_PREFETCH=0
  kTf32Own,             // TC_TF32_OWN=1: the own 1-pass TF32 kernel's row (gemm_tf32.h)
  // The quantized bulk GEMV (gemv_quant_bulk.cu, docs/quant.md): A/B switches and diagnostics.
  kQuantBulkSmemKb,
  kQuantBulkStages,
  kQuantBulkStageKb,
  kQuantBulkFirst,
  kQuantBulkRp,
  kQuantBulkDot,
  kQuantBulkPace,
  kQuantBulkPaceKb,
  kQuantBulkXpairs,
  kQuantBulkCtas,
  kQuantBulkWarps,
  kQuantBulkXreg,
  kQuantBulkAblate,
  kQuantBulkVerbose,
  kQuantBulkTrace,
  kQuantBulkXcl,
  kQuantBulkXclK,
  // The batched-decode wgmma kernel (quant_mma_b32_geometry.cu, quant_mma_b32.cu) and the f16 MMA
  // (quant_mma_f16.cu).
  kQuantB32,
  kQuantB32Wg,
  kQuantB32Xconv,
  kQuantB32Wbox,
  kQuantB32Even,
  kQuantB32Splits,
  kQuantB32MaxSplits,
  kQuantB32Cluster,
  kQuantB32Fixup,
  kQuantB32Wbatch,
  kQuantB32Ablate,
  kQuantB32Convert,
  kQuantB32Q8,
  kQuantB32OldBelow,
  kQuantB32MinM,
  kQuantB32Small,
  kQuantF16Units,
  kQuantF16Splits,
  kQuantF16Xcl,  // quant_mma_xreg.cu's knobs
  kQuantF16Xfirst,
  kQuantF16Hoist,
  kQuantF16Xpace,
  kQuantF16Xrs,
  kQuantF16Xreg,
  kQuantF16XregMaxm,
  kQuantF16Ablate,
  kQuantF16Rpc,
  kQuantF16Xpref,
  kQuantF16Xtma,
  kQuantF16I8,
  kQuantPrefillQ4kScales,  // quant_prefill_fused.cu's knobs
  kQuantPrefillCluster,
  kQuantPrefillPdl,
  kCount
};

inline constexpr const char* kNames[kCount] = {"TC_GEMM_ROW",
                                               "TC_AUTOTUNE",
                                               "TC_LOG",
                                               "TC_GEMM_PDL",
                                               "TC_WGMMA_EPILOGUE",
                                               "TC_WGMMA_SWAP",
                                               "TC_WGMMA_VARIANT",
                                               "TC_WGMMA_CLUSTER_SPLITK",
                                               "TC_WGMMA_PACK128",
                                               "TC_WGMMA_PACK",
                                               "TC_USE_128_TILE",
                                               "TC_S8_PINGPONG",
                                               "TC_SKINNY_BULK",
                                               "TC_SKINNY_PREFETCH",
                                               "TC_SKINNY_PERSIST",
                                               "TC_SKINNY_BULK_PREFETCH",
                                               "TC_TF32_OWN",
                                               "TC_QUANT_BULK_SMEM_KB",
                                               "TC_QUANT_BULK_STAGES",
                                               "TC_QUANT_BULK_STAGE_KB",
                                               "TC_QUANT_BULK_FIRST",
                                               "TC_QUANT_BULK_RP",
                                               "TC_QUANT_BULK_DOT",
                                               "TC_QUANT_BULK_PACE",
                                               "TC_QUANT_BULK_PACE_KB",
                                               "TC_QUANT_BULK_XPAIRS",
                                               "TC_QUANT_BULK_CTAS",
                                               "TC_QUANT_BULK_WARPS",
                                               "TC_QUANT_BULK_XREG",
                                               "TC_QUANT_BULK_ABLATE",
                                               "TC_QUANT_BULK_VERBOSE",
                                               "TC_QUANT_BULK_TRACE",
                                               "TC_QUANT_BULK_XCL",
                                               "TC_QUANT_BULK_XCL_K",
                                               "TC_QUANT_B32",
                                               "TC_QUANT_B32_WG",
                                               "TC_QUANT_B32_XCONV",
                                               "TC_QUANT_B32_WBOX",
                                               "TC_QUANT_B32_EVEN",
                                               "TC_QUANT_B32_SPLITS",
                                               "TC_QUANT_B32_MAX_SPLITS",
                                               "TC_QUANT_B32_CLUSTER",
                                               "TC_QUANT_B32_FIXUP",
                                               "TC_QUANT_B32_WBATCH",
                                               "TC_QUANT_B32_ABLATE",
                                               "TC_QUANT_B32_CONVERT",
                                               "TC_QUANT_B32_Q8",
                                               "TC_QUANT_B32_OLD_BELOW",
                                               "TC_QUANT_B32_MIN_M",
                                               "TC_QUANT_B32_SMALL",
                                               "TC_QUANT_F16_UNITS",
                                               "TC_QUANT_F16_SPLITS",
                                               "TC_QUANT_F16_XCL",
                                               "TC_QUANT_F16_XFIRST",
                                               "TC_QUANT_F16_HOIST",
                                               "TC_QUANT_F16_XPACE",
                                               "TC_QUANT_F16_XRS",
                                               "TC_QUANT_F16_XREG",
                                               "TC_QUANT_F16_XREG_MAXM",
                                               "TC_QUANT_F16_ABLATE",
                                               "TC_QUANT_F16_RPC",
                                               "TC_QUANT_F16_XPREF",
                                               "TC_QUANT_F16_XTMA",
                                               "TC_QUANT_F16_I8",
                                               "TC_QUANT_PREFILL_Q4K_SCALES",
                                               "TC_QUANT_PREFILL_CLUSTER",
                                               "TC_QUANT_PREFILL_PDL"};

struct State {
  uint64_t stamp;             // env_stamp() when `value` was read; 0: never read
  int depth;                  // open Scopes on this thread
  bool checked;               // refreshed since the outermost Scope opened
  const char* value[kCount];  // getenv(kNames[i]) at that time (nullptr: unset)
};
inline thread_local State t_state{};  // constant-initialized: no TLS guard

// Whether the environment entry `e` ("NAME=value") is one whose change the stamp must see.
inline bool watched(const char* e) {
  if (e[0] == 'T') return e[1] == 'C' && e[2] == '_';
  return (e[0] == 'H' && std::strncmp(e, "HOME=", 5) == 0) ||
         (e[0] == 'X' && std::strncmp(e, "XDG_CACHE_HOME=", 15) == 0);
}

// A hash of the watched entries' addresses, order and count; never 0.
inline uint64_t env_stamp() {
  uint64_t sum = 0, mixed = 0, n = 0;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (!watched(*e)) continue;
    const uint64_t a = reinterpret_cast<uintptr_t>(*e);
    sum += a;
    mixed ^= a * 0x9e3779b97f4a7c15ull + n++;  // order-sensitive (unsetenv shifts entries)
  }
  const uint64_t h = (sum * 0xff51afd7ed558ccdull) ^ mixed ^ (n << 56);
  return h != 0 ? h : 1;
}

// Re-reads the knobs when the environment changed since the last read on this thread.
inline void refresh() {
  State& s = t_state;
  const uint64_t stamp = env_stamp();
  if (stamp == s.stamp) return;
  for (int i = 0; i < kCount; ++i) s.value[i] = std::getenv(kNames[i]);
  s.stamp = stamp;
}

// Opens a span in which get() refreshes once, at its first use (a call that reads no knob, a
// cuBLASLt row, pays nothing), and then trusts it (see the header comment).
class Scope {
 public:
  Scope() {
    if (t_state.depth++ == 0) t_state.checked = false;
  }
  ~Scope() { --t_state.depth; }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

inline void refresh_unless_scoped() {
  State& s = t_state;
  if (s.depth > 0 && s.checked) return;
  refresh();
  s.checked = s.depth > 0;
}
// What std::getenv(kNames[id]) returns (an empty value included).
inline const char* get(Id id) {
  refresh_unless_scoped();
  return t_state.value[id];
}
// Whether the knob is set to exactly `value`.
inline bool is(Id id, const char* value) {
  const char* v = get(id);
  return v != nullptr && std::strcmp(v, value) == 0;
}
// The stamp of the values get() returns now: plans cached under it are replanned when a TC_*
// variable, HOME or XDG_CACHE_HOME changes (the entries env_stamp watches).
inline uint64_t stamp() {
  refresh_unless_scoped();
  return t_state.stamp;
}

}  // namespace tc::knobs
