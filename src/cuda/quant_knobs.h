// The quantized launchers' environment knobs (TC_QUANT_*, docs/quant.md) without a getenv per
// knob. A batch-1 decode step is ~130 public calls of 4-20 us of GPU time each, queued from the
// host, and the bulk GEMV's launcher alone reads ten knobs per launch: each getenv walks the
// whole environment. During a public call (quant_rows::run) a KnobScope holds the TC_QUANT_*
// entries of one pass over the environment and knob() answers from it; elsewhere (the benchmark
// and the tests calling launchers directly) knob() is getenv, so a knob set between calls is
// always seen. Header-only: included by quant_rows.cpp and by the launchers' .cu files.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace tc::cuda::quant {

struct KnobSnapshot {
  static constexpr int kMax = 32;
  const char* entries[kMax];  // "TC_QUANT_NAME=value", pointers into the environment
  int count = 0;
  bool overflow = false;  // more TC_QUANT_* entries than kMax: knob() uses getenv
};

inline thread_local const KnobSnapshot* t_knob_snapshot = nullptr;

inline constexpr char kKnobPrefix[] = "TC_QUANT_";
inline constexpr size_t kKnobPrefixLen = sizeof kKnobPrefix - 1;

// The snapshot of the calling thread's current public call, for the scope's lifetime (nested
// scopes restore the outer one).
class KnobScope {
 public:
  KnobScope() {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      if (std::strncmp(*e, kKnobPrefix, kKnobPrefixLen) != 0) continue;
      if (snap_.count == KnobSnapshot::kMax) {
        snap_.overflow = true;
        break;
      }
      snap_.entries[snap_.count++] = *e;
    }
    outer_ = t_knob_snapshot;
    t_knob_snapshot = &snap_;
  }
  ~KnobScope() { t_knob_snapshot = outer_; }
  KnobScope(const KnobScope&) = delete;
  KnobScope& operator=(const KnobScope&) = delete;

 private:
  KnobSnapshot snap_;
  const KnobSnapshot* outer_ = nullptr;
};

// The value of knob `name`, nullptr when unset or empty (as getenv, with "" read as unset).
inline const char* knob(const char* name) {
  const KnobSnapshot* s = t_knob_snapshot;
  if (s == nullptr || s->overflow || std::strncmp(name, kKnobPrefix, kKnobPrefixLen) != 0) {
    const char* v = std::getenv(name);
    return v != nullptr && v[0] != '\0' ? v : nullptr;
  }
  const size_t n = std::strlen(name);
  for (int i = 0; i < s->count; ++i) {
    const char* e = s->entries[i];
    if (std::strncmp(e, name, n) == 0 && e[n] == '=') return e[n + 1] != '\0' ? e + n + 1 : nullptr;
  }
  return nullptr;
}

// knob(name) as an integer (atoi), `fallback` when unset or empty.
inline int knob_int(const char* name, int fallback) {
  const char* v = knob(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

}  // namespace tc::cuda::quant
