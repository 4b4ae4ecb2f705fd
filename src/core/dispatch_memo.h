// The dispatch's per-call fast path (used by dispatch.cpp and the quantized table,
// quant_table.cpp): the knobs read from the per-thread knob cache (core/knobs.h), and the
// per-thread memo of decisions keyed by a call's exact signature.
#pragma once

#include <strings.h>

#include <cstdint>
#include <cstring>
#include <span>

#include "core/dispatch.h"
#include "core/internal.h"
#include "core/knobs.h"

namespace tc::memo {

// A small model's decode step or a 256^3 GEMM runs for a few microseconds, so what the dispatch
// does on the host before the launch is part of the measured time. Two things keep it small:
// the environment is checked once per call (core/knobs.h, not one getenv per knob), and the
// decision of the last calls with the same signature (row and variant) is remembered per
// thread, so a repeated call does no can_run, planner, cache or table work before the row's
// run().

// The knobs a dispatch reads and a fingerprint of every TC_* entry plus HOME and XDG_CACHE_HOME
// (which locate the autotune cache): any change of a knob that a row, a planner or the cache
// reads gives a new fingerprint and a fresh decision. The fingerprint is the knob cache's stamp
// (core/knobs.h: the entries' addresses, not their text), the one the planners' plan caches
// are keyed by.
struct Knobs {
  const char* gemm_row = nullptr;  // TC_GEMM_ROW (nullptr when unset or empty)
  const char* autotune = nullptr;  // TC_AUTOTUNE
  bool debug = false;              // TC_LOG=debug (any case)
  uint64_t fingerprint = 0;
};

constexpr uint64_t kFnvBasis = 1469598103934665603ull, kFnvPrime = 1099511628211ull;

// A key's fields, packed into words by the caller, hashed for a direct-mapped slot table.
inline uint64_t mix(std::span<const uint64_t> words) {
  uint64_t h = kFnvBasis;
  for (uint64_t w : words) h = (h ^ w) * kFnvPrime;
  return h ^ (h >> 29);
}

// An empty value reads as unset, as env::get() has it.
inline const char* nonempty(const char* v) {
  return v != nullptr && *v != '\0' ? v : nullptr;
}

inline Knobs read_knobs() {
  const knobs::Scope scope;  // one check of the environment for the reads below
  Knobs k;
  k.gemm_row = nonempty(knobs::get(knobs::kGemmRow));
  k.autotune = nonempty(knobs::get(knobs::kAutotune));
  const char* log = nonempty(knobs::get(knobs::kLog));
  k.debug = log != nullptr && strcasecmp(log, "debug") == 0;
  k.fingerprint = knobs::stamp();
  return k;
}

// Everything a decision depends on: the context's device, every field of the descriptor (alpha
// and beta as bits: planners treat beta != 0, i8 alpha = 1 and more specially), batch and
// strides, the pointers' alignment up to 256 bytes (TMA legality, cuBLASLt's plans), the
// environment's fingerprint and the autotune cache's generation.
struct CallKey {
  const void* impl;
  int32_t device, a, b, c, acc, ta, tb, M, N, K, lda, ldb, ldc, batch;
  uint32_t alpha, beta, align_a, align_b, align_c;
  int64_t stride_a, stride_b, stride_c;
  uint64_t env, generation;
  bool operator==(const CallKey&) const = default;
};

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline uint32_t align256(const void* ptr) {
  const uint64_t v = reinterpret_cast<uintptr_t>(ptr) | 256;
  return uint32_t(v & (~v + 1));
}

inline CallKey key_of(const GemmProblem& p, uint64_t env, uint64_t generation) {
  const tc_gemm_desc& d = p.d;
  return {p.ctx->impl.get(),
          int32_t(p.ctx->device),
          int32_t(d.a_dtype),
          int32_t(d.b_dtype),
          int32_t(d.c_dtype),
          int32_t(d.accum_dtype),
          d.transpose_a,
          d.transpose_b,
          d.M,
          d.N,
          d.K,
          d.lda,
          d.ldb,
          d.ldc,
          p.batch,
          bits(d.alpha),
          bits(d.beta),
          align256(p.a),
          align256(p.b),
          align256(p.c),
          p.stride_a,
          p.stride_b,
          p.stride_c,
          env,
          generation};
}

inline uint64_t hash_of(const CallKey& k) {
  const uint64_t f[] = {reinterpret_cast<uintptr_t>(k.impl),
                        uint64_t(k.device),
                        uint64_t(k.a) | uint64_t(k.b) << 8 | uint64_t(k.c) << 16 |
                            uint64_t(k.acc) << 24 | uint64_t(k.ta) << 32 | uint64_t(k.tb) << 33,
                        uint64_t(k.M),
                        uint64_t(k.N),
                        uint64_t(k.K),
                        uint64_t(k.lda) << 32 | uint32_t(k.ldb),
                        uint64_t(k.ldc) << 32 | uint32_t(k.batch),
                        uint64_t(k.alpha) << 32 | k.beta,
                        uint64_t(k.align_a) | uint64_t(k.align_b) << 16 | uint64_t(k.align_c) << 32,
                        uint64_t(k.stride_a),
                        uint64_t(k.stride_b),
                        uint64_t(k.stride_c),
                        k.env,
                        k.generation};
  return mix(f);
}

// Direct-mapped, per thread (no lock), trivially constructible (no TLS guard on access).
struct Slot {
  bool used;
  CallKey key;
  const GemmRow* row;
  int variant;
};
constexpr size_t kSlots = 32;
inline thread_local Slot t_slots[kSlots];

inline Slot& slot_for(const CallKey& key) {
  return t_slots[hash_of(key) % kSlots];
}

}  // namespace tc::memo
