// The CUDA emitter's class, shared by its three files: emit_cuda.cpp (kernel frame,
// expressions, stores, barriers), emit_cuda_dot.cpp (SIMT and tensor-core dots),
// emit_cuda_pipe.cpp (shared-memory fills and @pipeline). Internal to phobos/src/emit.
#pragma once

#include <map>
#include <set>
#include <string>

#include "../build.h"
#include "../passes/plan.h"
#include "emit.h"

namespace phobos::cuda_emit {

using ir::Node;
using ir::NodeP;
using ir::Op;
using ir::Stmt;
using ir::VType;
using passes::Layout;
using passes::Plan;

const char* ctype(DType t);
const char* compute_type(DType t);
std::string cname(const ir::Kernel& k, int r);

class CudaEmitter {
 public:
  CudaEmitter(const ir::Kernel& k, const Plan& p) : k_(k), p_(p) {}
  std::string run();

 private:
  const ir::Kernel& k_;
  const Plan& p_;
  std::string o_;
  int ind_ = 1;
  std::map<int, std::string> override_;  // register -> expression (prefetch of the next step)
  int tmp_ = 0;
  bool wgmma_overlap_ = false;  // wgmma batches may stay in flight across pipeline steps
  // The barrier among the threads that run the kernel body: __syncthreads(), or in the
  // warp-specialized form a named barrier over the T consumer threads (the producer warpgroup
  // has left).
  std::string bar_ = "__syncthreads();";
  void line(const std::string& s) { o_ += std::string(ind_ * 2, ' ') + s + "\n"; }
  std::string fresh(const char* p) { return std::string(p) + std::to_string(tmp_++); }

  // 16-byte chunks: the element count V a fill of `reg` from v moves per load (0: not
  // vectorizable). See emit_cuda_pipe.cpp.
  int64_t vec_width(int reg, const NodeP& v) const;

  std::set<int> loop_vars() const;
  static std::string flit(double v);
  std::string round(DType dt, const std::string& e);
  // Dimension d of tensor argument t as a C expression.
  std::string dim(int t, size_t d) const;
  // Offset and in-bounds predicate ("" when unchecked) of element (r, c) of a tensor load.
  void load_addr(const Node& n, const std::string& r, const std::string& c, const std::string& i,
                 std::string* off, std::string* pred);
  // Emits `uint4 dst` = the V elements of load v starting at tile element (r, c).
  void vec_load(const NodeP& v, int64_t V, const std::string& r, const std::string& c,
                const std::string& dst, bool declare);
  // Element (r, c) of node n; r/c are C expressions ("0" for absent axes).
  std::string elem(const NodeP& n, const std::string& r, const std::string& c,
                   const std::string& i);
  // Column of a SIMT layout's per-thread column index jj (an expression).
  static std::string simt_col(const Layout& l, const std::string& jj);
  // Opens a loop over the elements this thread owns under layout l; defines r, c, i.
  void open_owned(const Layout& l, std::string* r, std::string* c, std::string* i);
  void close();
  // The layout of the first register tile in n (to iterate a store over), if any.
  const Layout* frag_layout(const NodeP& n) const;
  // Cooperative loop over every element of a tile of this shape.
  void open_all(const std::vector<int64_t>& shape, std::string* r, std::string* c, std::string* e);
  std::string smem_idx(int reg, const std::string& r, const std::string& c) const;
  // Barrier after shared-memory writes; with wgmma first a proxy fence so the async proxy
  // (wgmma) sees the generic-proxy writes (st.shared, cp.async).
  void sync();
  // The wgmma form of an `acc += dot(a, b)` (sm_90a): one batch of m64nNk16 per 64-wide K step.
  void wgmma_dot(const passes::DotSite& d, const Layout& l, const std::string& A,
                 const std::string& B);
  std::string smem_at(int reg, const std::string& stage, const std::string& r, const std::string& c,
                      const std::string& e) const;
  void smem_fill(int reg, const NodeP& v, const std::string& stage);
  std::string store_cast(DType dt, const std::string& v);
  void def(const Stmt& s);
  void dot(const passes::DotSite& d);
  // f32 SIMT dot with 16-byte shared loads: A (and B of dot_t) rows read 4 k-steps at a time
  // as float4, B of dot read as float4 column groups (layout gc = 4). Per 4 k-steps a thread
  // issues pr + (pc/4)*4 (or pr + pc) 16-byte loads for 4*pr*pc FMAs.
  bool simt_vec_dot(const passes::DotSite& d, const Layout& l, const std::string& A,
                    const std::string& B, const std::string& PA, const std::string& PB,
                    const std::string& acc);
  void round_acc(const passes::DotSite& d, const Layout& l);
  const passes::DotSite* dot_at(const Stmt& s) const;
  void store(const Stmt& s);
  // Issues the copies of operand `reg` for one step into stage `stage`: 16-byte cp.async per
  // chunk that is in bounds and aligned, else plain shared stores with zero fill (the step
  // reading them is behind a barrier either way).
  void async_fill(int reg, const NodeP& v, const std::string& stage);
  // @pipeline with cp.async, S = p_.stages: steps 0 .. S-2 are in flight before the loop; at
  // each step a thread waits for its own copies of this step (wait_group S-2), one barrier makes
  // everyone's visible and retires the stage read by the previous step, which is then refilled
  // with step + S-1 while this step computes. One barrier per step.
  void async_pipeline(const Stmt& s, const std::map<int, const Stmt*>& defs, const std::string& v,
                      const std::string& lo, const std::string& hi, const std::string& st);
  void for_loop(const Stmt& s);
  void emit(const Stmt& s);
  void block(const std::vector<Stmt>& b);
  // Pass "barriers": two barriers with nothing between them are one.
  std::string dedupe_barriers(const std::string& src) const;
  // Warp-specialized TMA form (Plan::ws; emit_cuda_ws.cpp): the kernel frame (barriers, the
  // producer warpgroup, the persistent tile loop around the body), the tile index decode, the
  // consumer side of the pipelined loop, and stores of two adjacent 16-bit columns at once.
  void ws_frame();
  void ws_decode();
  void ws_producer();
  void ws_loop(const Stmt& s);
  bool pair_store(const Stmt& s, const Layout& l);
};

}  // namespace phobos::cuda_emit
