// CUDA emitter, the warp-specialized TMA form of a wgmma GEMM loop (sm_90a, Plan::ws), laid out
// like the hand-written src/cuda/gemm_wgmma.cuh with the tile library's headers (tma.cuh,
// mbarrier.cuh, wgmma.cuh):
//  - threads 0 .. T-1 (the @launch threads) are the consumers and run the kernel body as in the
//    other forms (same layouts, same tid); threads T .. T+127 are one producer warpgroup whose
//    first thread issues the TMA loads of both operands into a ring of `stages` stages;
//  - full[s] completes when stage s has landed (expect_tx = both boxes), empty[s] when every
//    consumer warp has released it (its wgmma batch retired);
//  - consumers keep one wgmma batch in flight (wait_group 1) and release the previous stage;
//  - persistent: gridDim.x CTAs walk the logical grid (tiles x fastest, as the non-persistent
//    launch orders its blocks), so the producer loads the next tile while the consumers run the
//    epilogue; ctx.block / ctx.grid are the logical tile's;
//  - with two consumer warpgroups setmaxnreg moves registers from the producer (40) to the
//    consumers (232), as gemm_wgmma.cuh does.
// Shared tiles filled outside the loop (a bias row) and barriers in the body use named
// barrier 1 over the T consumer threads, since the producer warpgroup leaves after its loop.
#include "emit_cuda.h"

namespace phobos::cuda_emit {

void CudaEmitter::ws_decode() {
  line(
      "const int ph_bx = ph_t % ph_gx, ph_by = ph_t / ph_gx % ph_gy, ph_bz = ph_t / (ph_gx * "
      "ph_gy);");
  line("(void)ph_bx;");
  line("(void)ph_by;");
  line("(void)ph_bz;");
}

void CudaEmitter::ws_frame() {
  std::string S = std::to_string(p_.stages);
  line("tc::tile::mbarrier* ph_full = reinterpret_cast<tc::tile::mbarrier*>(ph_smem + " +
       std::to_string(p_.bar_offset) + ");");
  line("tc::tile::mbarrier* ph_empty = ph_full + " + S + ";");
  for (int a = 0; a < 3; ++a)
    line(std::string("const int ph_g") + char('x' + a) + " = " + elem(k_.grid[a], "0", "0", "0") +
         ";");
  line("const int ph_tiles = ph_gx * ph_gy * ph_gz;");
  line("if (tid == 0) {");
  ++ind_;
  for (auto& t : p_.tma) line("tc::tile::tma_prefetch_map(&ph_map_" + cname(k_, t.reg) + ");");
  line("for (int s = 0; s < " + S + "; ++s) {");
  line("  tc::tile::mbar_init(&ph_full[s], 1);");
  line("  tc::tile::mbar_init(&ph_empty[s], " + std::to_string(k_.threads / 32) +
       ");  // lane 0 of each consumer warp");
  line("}");
  line("tc::tile::mbar_fence_init();");
  close();
  line("__syncthreads();");
  ws_producer();
  if (k_.threads == 256) line("tc::tile::warpgroup_reg_alloc<232>();");
}

void CudaEmitter::ws_producer() {
  const Stmt& s = *p_.ws_loop;
  std::string S = std::to_string(p_.stages), T = std::to_string(k_.threads);
  int64_t bytes = 0;
  for (auto& t : p_.tma) bytes += t.rows * t.cols * 2;
  line("if (tid >= " + T + ") {  // the producer warpgroup");
  ++ind_;
  if (k_.threads == 256) line("tc::tile::warpgroup_reg_dealloc<40>();");
  line("if (tid == " + T + ") {");
  ++ind_;
  line("int ph_ps = 0;");
  line("unsigned ph_pp = 0;");
  line("for (int ph_t = blockIdx.x; ph_t < ph_tiles; ph_t += gridDim.x) {");
  ++ind_;
  ws_decode();
  std::string v = cname(k_, s.reg);
  line("for (int " + v + " = " + elem(s.lo, "0", "0", "0") + "; " + v + " < " +
       elem(s.hi, "0", "0", "0") + "; " + v + " += " + elem(s.step, "0", "0", "0") + ") {");
  ++ind_;
  line("tc::tile::mbar_wait(&ph_empty[ph_ps], ph_pp ^ 1u);");
  line("tc::tile::mbar_arrive_expect_tx(&ph_full[ph_ps], " + std::to_string(bytes) + "u);");
  for (auto& t : p_.tma) {
    const Stmt* def = nullptr;
    for (auto& x : s.body)
      if (x.kind == Stmt::Def && x.reg == t.reg) def = &x;
    const Node& ld = *def->value;
    std::string row = elem(ld.slices[0].start, "0", "0", "0");
    std::string col = elem(ld.slices[1].start, "0", "0", "0");
    std::string dst = cname(k_, t.reg) + " + ph_ps * " + std::to_string(p_.smem_elems(k_, t.reg));
    std::string map = "&ph_map_" + cname(k_, t.reg);
    if (t.kind == 1) {
      line("tc::tile::tma_load_3d(" + dst + ", " + map + ", &ph_full[ph_ps], " + col + ", " + row +
           ", 0);");
    } else {  // N-major: one 64 x 64 box per 64-column atom (8 KB apart: the descriptor's LBO)
      for (int64_t j = 0; j < t.cols / 64; ++j)
        line("tc::tile::tma_load_3d(" + dst + " + " + std::to_string(j * 64 * t.rows) + ", " + map +
             ", &ph_full[ph_ps], " + col + " + " + std::to_string(64 * j) + ", " + row + ", 0);");
    }
  }
  line("if (++ph_ps == " + S + ") {");
  line("  ph_ps = 0;");
  line("  ph_pp ^= 1u;");
  line("}");
  close();
  close();
  close();
  line("return;");
  close();
}

// The consumers' side of the loop: wait for the stage, one wgmma batch (left in flight), then
// release the stage the previous batch read.
void CudaEmitter::ws_loop(const Stmt& s) {
  std::string v = cname(k_, s.reg), S = std::to_string(p_.stages);
  // No reg_fence around these batches: any access to the accumulators of a batch in flight,
  // even an empty asm, makes ptxas serialize the wgmmas (C7511/C7514). ptxas tracks the
  // accumulators itself; it reports no such access in this form (checked with -Xptxas -v).
  line("for (int " + v + " = " + elem(s.lo, "0", "0", "0") + "; " + v + " < " +
       elem(s.hi, "0", "0", "0") + "; " + v + " += " + elem(s.step, "0", "0", "0") + ") {");
  ++ind_;
  line("tc::tile::mbar_wait(&ph_full[ph_stage], ph_phase);");
  wgmma_overlap_ = true;
  for (auto& x : s.body)
    if (dot_at(x)) emit(x);
  wgmma_overlap_ = false;
  line("if (ph_prev >= 0 && (tid & 31) == 0) tc::tile::mbar_arrive(&ph_empty[ph_prev]);");
  line("ph_prev = ph_stage;");
  line("if (++ph_stage == " + S + ") {");
  line("  ph_stage = 0;");
  line("  ph_phase ^= 1u;");
  line("}");
  close();
  line("tc::tile::wgmma_wait<0>();");
  line("if (ph_prev >= 0 && (tid & 31) == 0) tc::tile::mbar_arrive(&ph_empty[ph_prev]);");
  line("ph_prev = -1;");
}

// A tile store from wgmma accumulators into a 16-bit tensor: elements i, i + 1 of a thread are
// columns c, c + 1 of one row, stored as one 4-byte write when both are in range and the
// address is 4-byte aligned, else element by element (ragged edges, odd row lengths).
bool CudaEmitter::pair_store(const Stmt& s, const Layout& l) {
  const ir::Arg& a = k_.args[s.tensor];
  if (l.kind != Layout::Wgmma || (a.dt != DType::F16 && a.dt != DType::BF16) ||
      s.slices.size() != 2 || s.slices[0].point || s.slices[1].point || !is_float(s.value->type.dt))
    return false;
  std::string i = fresh("i"), r = fresh("r"), c = fresh("c");
  line("#pragma unroll");
  line("for (int " + i + " = 0; " + i + " < " + std::to_string(l.per_thread()) + "; " + i +
       " += 2) {");
  ++ind_;
  line("const int " + r + " = ph_wg_row(tid, " + i + ");");
  line("const int " + c + " = ph_wg_col(tid, " + i + ");");
  line("const float ph_v0 = " + elem(s.value, r, c, i) + ";");
  line("const float ph_v1 = " + elem(s.value, r, "(" + c + " + 1)", "(" + i + " + 1)") + ";");
  std::string row = "(" + elem(s.slices[0].start, "0", "0", i) + " + " + r + ")";
  std::string col = "(" + elem(s.slices[1].start, "0", "0", i) + " + " + c + ")";
  line("const int ph_row = " + row + ", ph_col = " + col + ";");
  line("const long long ph_o = (long long)ph_row * " + dim(s.tensor, 1) + " + ph_col;");
  auto checked = [&](int d) { return a.dims[d] < 0 || !p_.unchecked_dims.count(a.dims[d]); };
  std::string p0, p1;
  if (checked(0)) p0 = "(unsigned)ph_row < (unsigned)" + dim(s.tensor, 0);
  if (checked(1)) {
    std::string pc0 = "(unsigned)ph_col < (unsigned)" + dim(s.tensor, 1);
    std::string pc1 = "(unsigned)(ph_col + 1) < (unsigned)" + dim(s.tensor, 1);
    p1 = p0.empty() ? pc1 : p0 + " && " + pc1;
    p0 = p0.empty() ? pc0 : p0 + " && " + pc0;
  } else {
    p1 = p0;
  }
  std::string T = a.dt == DType::F16 ? "__half2" : "__nv_bfloat162";
  std::string cvt = a.dt == DType::F16 ? "__floats2half2_rn" : "__floats2bfloat162_rn";
  std::string C = a.name;
  line("if (" + (p1.empty() ? std::string() : p1 + " && ") + "(ph_o & 1) == 0) {");
  line("  *reinterpret_cast<" + T + "*>(&" + C + "[ph_o]) = " + cvt + "(ph_v0, ph_v1);");
  line("} else {");
  line("  " + (p0.empty() ? "" : "if (" + p0 + ") ") + "ph_st(&" + C + "[ph_o], ph_v0);");
  line("  " + (p1.empty() ? "" : "if (" + p1 + ") ") + "ph_st(&" + C + "[ph_o + 1], ph_v1);");
  line("}");
  close();
  return true;
}

}  // namespace phobos::cuda_emit
