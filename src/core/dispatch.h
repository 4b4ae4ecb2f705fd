// The dispatch tables. Each op has an ordered list of rows {backend, instance name, can_run,
// run}; a call is validated once (validate.cpp), then the first row whose can_run accepts it
// runs, unless the autotune cache names another row for the call's shape class. Reading a
// table (gemm_table.cpp) tells the whole fallback ladder; adding a kernel is adding a row.
#pragma once

#include <span>
#include <string>

#include "core/internal.h"

namespace tc {

// A validated GEMM: leading dimensions resolved (never 0), pointers are device pointers.
// batch == 1 for tc_gemm; strides are in elements.
struct GemmProblem {
  tc_gemm_desc d{};
  int32_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  tc_context* ctx = nullptr;
  void* stream = nullptr;  // native stream handle (cudaStream_t) or nullptr
  // Which configuration of the chosen row runs (cuBLASLt: the index of its heuristic result);
  // set by the autotuner, 0 = the row's own choice.
  int variant = 0;
};

struct GemmRow {
  tc_backend_t backend;
  const char* name;
  // Whether this row can serve `p` on `ctx`; when not, `why` says so in a few words.
  bool (*can_run)(const GemmProblem& p, std::string& why);
  tc_status_t (*run)(const GemmProblem& p);
};

std::span<const GemmRow> gemm_table();

// Picks the row for `p` and sets p.variant: TC_GEMM_ROW=<prefix> forces the first row whose
// name starts with the prefix (tests and benchmarks enumerate rows with it); else the autotune
// winner for p's class on devices that time candidates (autotune.h); else the ladder. Logs the
// choice under TC_LOG=debug. Returns nullptr with the error message set when no row can serve.
// Decisions are remembered per thread under the call's exact signature (device, every
// descriptor field, batch, strides, pointer alignment up to 256 bytes, the TC_* environment,
// the autotune cache's generation): a repeated call goes from validation to the row's run()
// without asking any row's can_run again (TC_GEMM_ROW and TC_LOG=debug calls bypass the memo).
const GemmRow* pick_gemm_row(GemmProblem& p);

// Records what ran for tc_last_backend() / tc_last_instance(). When the row noted a more
// specific instance name on this thread while it ran (note_instance), that name is reported.
void record_dispatch(tc_backend_t backend, const char* instance);
// Called by a row's run(): `name` (e.g. the planned kernel instance) must outlive the process;
// intern_name() makes such a copy.
void note_instance(const char* name);
const char* intern_name(const std::string& name);

}  // namespace tc
