// CUDA emitter, dots: `acc += dot/dot_t(a, b)` as SIMT FMAs (scalar, or float4 shared loads
// for f32 with the grouped layout) or as tensor-core mma.sync m16n8k16 fed by ldmatrix from the
// padded shared tiles (maps in mma_map.inc, the tile library's mma_16816).
#include "emit_cuda.h"

namespace phobos::cuda_emit {

void CudaEmitter::dot(const passes::DotSite& d) {
  const Layout& l = p_.frag.at(d.acc);
  const VType& at = k_.regs[d.a].type;
  int64_t K = at.shape[1];
  std::string A = cname(k_, d.a), B = cname(k_, d.b), acc = cname(k_, d.acc);
  std::string PA = std::to_string(p_.pitch_of(k_, d.a)), PB = std::to_string(p_.pitch_of(k_, d.b));
  if (p_.double_buffered.count(d.a))
    A = "(" + A + " + ph_stage * " + std::to_string(p_.smem_elems(k_, d.a)) + ")";
  if (p_.double_buffered.count(d.b))
    B = "(" + B + " + ph_stage * " + std::to_string(p_.smem_elems(k_, d.b)) + ")";
  if (!d.mma) {
    auto bk = [&](const std::string& kk, const std::string& n) {
      return d.trans ? B + "[(" + n + ") * " + PB + " + " + kk + "]"
                     : B + "[(" + kk + ") * " + PB + " + " + n + "]";
    };
    int64_t pr = l.R / l.tr, pc = l.C / l.tc;
    if (simt_vec_dot(d, l, A, B, PA, PB, acc)) return round_acc(d, l);
    std::string q = fresh("q");
    line("#pragma unroll 4");
    line("for (int " + q + " = 0; " + q + " < " + std::to_string(K) + "; ++" + q + ") {");
    ++ind_;
    line("float av[" + std::to_string(pr) + "], bv[" + std::to_string(pc) + "];");
    line("#pragma unroll");
    line("for (int ii = 0; ii < " + std::to_string(pr) + "; ++ii) av[ii] = ph_ld(" + A +
         "[(tid / " + std::to_string(l.tc) + " + ii * " + std::to_string(l.tr) + ") * " + PA +
         " + " + q + "]);");
    line("#pragma unroll");
    line("for (int jj = 0; jj < " + std::to_string(pc) + "; ++jj) bv[jj] = ph_ld(" +
         bk(q, simt_col(l, "jj")) + ");");
    line("#pragma unroll");
    line("for (int ii = 0; ii < " + std::to_string(pr) + "; ++ii)");
    line("#pragma unroll");
    line("  for (int jj = 0; jj < " + std::to_string(pc) + "; ++jj) " + acc + "[ii * " +
         std::to_string(pc) + " + jj] += av[ii] * bv[jj];");
    close();
  } else if (l.kind == Layout::Wgmma) {
    wgmma_dot(d, l, A, B);
  } else {
    // Tensor cores: fragments come from the padded shared tiles through ldmatrix (maps in
    // mma_map.inc, checked on the CPU by tests/phobos/mma_map_test.cpp); the product is the
    // tile library's mma_16816 (src/cuda/tile/mma.cuh).
    std::string kk = fresh("kk");
    std::string row0 = "(tid / 32 / " + std::to_string(l.wn) + ") * " + std::to_string(l.R / l.wm);
    std::string col0 = "(tid / 32 % " + std::to_string(l.wn) + ") * " + std::to_string(l.C / l.wn);
    std::string ty = at.dt == DType::BF16 ? "tc::tile::bf16" : "tc::tile::f16";
    std::string MI = std::to_string(l.mi), NI = std::to_string(l.ni);
    line("#pragma unroll");
    line("for (int " + kk + " = 0; " + kk + " < " + std::to_string(K) + "; " + kk + " += 16) {");
    ++ind_;
    line("const int lane = tid % 32;");
    line("tc::tile::FragA16x16 fa[" + MI + "];");
    line("tc::tile::FragB16x8 fb[" + NI + "];");
    line("#pragma unroll");
    line("for (int mi = 0; mi < " + MI + "; ++mi)");
    line("  tc::tile::ldmatrix_x4(fa[mi].r, &" + A + "[(" + row0 +
         " + mi * 16 + ph_lda_row(lane)) * " + PA + " + " + kk + " + ph_lda_col(lane)]);");
    // B: two n-tiles per ldmatrix.x4, a last odd one with .x2 (lanes 0-15 give addresses).
    std::string baddr = d.trans ? "&" + B + "[(" + col0 + " + nj * 8 + ph_ldbt_row(lane)) * " + PB +
                                      " + " + kk + " + ph_ldbt_col(lane)]"
                                : "&" + B + "[(" + kk + " + ph_ldb_row(lane)) * " + PB + " + " +
                                      col0 + " + nj * 8 + ph_ldb_col(lane)]";
    std::string x4 = d.trans ? "tc::tile::ldmatrix_x4" : "ph_ldmatrix_x4_trans";
    std::string x2 = d.trans ? "tc::tile::ldmatrix_x2" : "ph_ldmatrix_x2_trans";
    line("#pragma unroll");
    line("for (int nj = 0; nj + 1 < " + NI + "; nj += 2) {");
    ++ind_;
    line("tc::tile::u32 t4[4];");
    line(x4 + "(t4, " + baddr + ");");
    line(
        "fb[nj].r[0] = t4[0]; fb[nj].r[1] = t4[1]; fb[nj + 1].r[0] = t4[2]; fb[nj + 1].r[1] = "
        "t4[3];");
    close();
    if (l.ni % 2) {
      line("{");
      ++ind_;
      line("const int nj = " + std::to_string(l.ni - 1) + ";");
      line(x2 + "(fb[nj].r, " + baddr + ");");
      close();
    }
    line("#pragma unroll");
    line("for (int mi = 0; mi < " + MI + "; ++mi)");
    line("#pragma unroll");
    line("  for (int nj = 0; nj < " + NI + "; ++nj) {");
    ++ind_;
    std::string base = acc + "[(mi * " + NI + " + nj) * 4 + ";
    line("tc::tile::FragC16x8 fc = {{" + base + "0], " + base + "1], " + base + "2], " + base +
         "3]}};");
    line("tc::tile::mma_16816<" + ty + ">(fc, fa[mi], fb[nj]);");
    line(base + "0] = fc.r[0]; " + base + "1] = fc.r[1]; " + base + "2] = fc.r[2]; " + base +
         "3] = fc.r[3];");
    close();
    close();
  }
  round_acc(d, l);
}

// f32 SIMT dot with 16-byte shared loads: A (and B of dot_t) rows read 4 k-steps at a time
// as float4, B of dot read as float4 column groups (layout gc = 4). Per 4 k-steps a thread
// issues pr + (pc/4)*4 (or pr + pc) 16-byte loads for 4*pr*pc FMAs.
bool CudaEmitter::simt_vec_dot(const passes::DotSite& d, const Layout& l, const std::string& A,
                               const std::string& B, const std::string& PA, const std::string& PB,
                               const std::string& acc) {
  const VType& at = k_.regs[d.a].type;
  int64_t K = at.shape[1], pr = l.R / l.tr, pc = l.C / l.tc;
  int64_t pa = p_.pitch_of(k_, d.a), pb = p_.pitch_of(k_, d.b);
  if (at.dt != DType::F32 || k_.regs[d.b].type.dt != DType::F32 || K % 4 || pa % 4 || pb % 4)
    return false;
  if (!d.trans && l.gc != 4) return false;
  std::string q = fresh("q"), tc = std::to_string(l.tc), tr = std::to_string(l.tr);
  std::string PR = std::to_string(pr), PC = std::to_string(pc);
  line("#pragma unroll 2");
  line("for (int " + q + " = 0; " + q + " < " + std::to_string(K) + "; " + q + " += 4) {");
  ++ind_;
  line("float4 av[" + PR + "];");
  line("#pragma unroll");
  line("for (int ii = 0; ii < " + PR + "; ++ii) av[ii] = *reinterpret_cast<const float4*>(&" + A +
       "[(tid / " + tc + " + ii * " + tr + ") * " + PA + " + " + q + "]);");
  if (d.trans) {
    line("float4 bv4[" + PC + "];");
    line("#pragma unroll");
    line("for (int jj = 0; jj < " + PC + "; ++jj) bv4[jj] = *reinterpret_cast<const float4*>(&" +
         B + "[(" + simt_col(l, "jj") + ") * " + PB + " + " + q + "]);");
  }
  line("#pragma unroll");
  line("for (int u = 0; u < 4; ++u) {");
  ++ind_;
  line("float bv[" + PC + "];");
  if (d.trans) {
    line("#pragma unroll");
    line("for (int jj = 0; jj < " + PC + "; ++jj) bv[jj] = ph_f4(bv4[jj], u);");
  } else {
    line("#pragma unroll");
    line("for (int g = 0; g < " + std::to_string(pc / 4) + "; ++g) {");
    line("  const float4 t = *reinterpret_cast<const float4*>(&" + B + "[(" + q + " + u) * " + PB +
         " + (tid % " + tc + ") * 4 + g * " + std::to_string(l.tc * 4) + "]);");
    line("  bv[g * 4] = t.x; bv[g * 4 + 1] = t.y; bv[g * 4 + 2] = t.z; bv[g * 4 + 3] = t.w;");
    line("}");
  }
  line("#pragma unroll");
  line("for (int ii = 0; ii < " + PR + "; ++ii) {");
  line("  const float a = ph_f4(av[ii], u);");
  line("  #pragma unroll");
  line("  for (int jj = 0; jj < " + PC + "; ++jj) " + acc + "[ii * " + PC +
       " + jj] += a * bv[jj];");
  line("}");
  close();
  close();
  return true;
}

void CudaEmitter::round_acc(const passes::DotSite& d, const Layout& l) {
  std::string acc = cname(k_, d.acc);
  if (k_.regs[d.acc].type.dt == DType::F16 || k_.regs[d.acc].type.dt == DType::BF16) {
    line("#pragma unroll");
    line("for (int i = 0; i < " + std::to_string(l.per_thread()) + "; ++i) " + acc +
         "[i] = " + round(k_.regs[d.acc].type.dt, acc + "[i]") + ";");
  }
}

// sm_90a: the operands sit in 128-byte-swizzled stages (K-major A, one 64-row slab of 8 KB per
// warpgroup; B K-major for dot_t, N-major in 64-column atoms for dot), so one K step of 64 is
// four m64nNk16 wgmmas whose descriptors advance 32 bytes (K-major) or 16 rows = 2048 bytes
// (N-major) each, exactly as the hand-written src/cuda/gemm_wgmma.cuh. In a pipeline the batch is
// left in flight (wait_group 1) and retired by the next step's wait, as in gemm_wgmma.cuh.
void CudaEmitter::wgmma_dot(const passes::DotSite& d, const Layout& l, const std::string& A,
                            const std::string& B) {
  const VType& at = k_.regs[d.a].type;
  std::string ty = at.dt == DType::BF16 ? "tc::tile::bf16" : "tc::tile::f16";
  bool n_major = p_.swizzle.at(d.b) == 2;
  std::string acc = cname(k_, d.acc);
  line("{");
  ++ind_;
  line("const tc::tile::u32 ph_sa = tc::tile::smem_addr(" + A + ") + (tid / 128) * 8192;");
  line("const tc::tile::u32 ph_sb = tc::tile::smem_addr(" + B + ");");
  // reg_fence pins the accumulators around the batch (as CUTLASS's warpgroup_fence_operand):
  // no copies of them for ptxas to find between a wgmma and its wait.
  // In the warp-specialized loop a batch is still in flight here: touching its accumulators
  // (even an empty asm) would make ptxas serialize the wgmmas (C7511), so the fences sit
  // outside that loop (ws_loop).
  if (!p_.ws) line("tc::tile::reg_fence(" + acc + ");");
  line("tc::tile::wgmma_fence();");
  line("#pragma unroll");
  line("for (int kk = 0; kk < " + std::to_string(at.shape[1] / 16) + "; ++kk) {");
  line("  const tc::tile::u64 da = tc::tile::make_smem_desc_sw128(ph_sa + kk * 32, 16, 1024);");
  line(n_major ? "  const tc::tile::u64 db = tc::tile::make_smem_desc_sw128(ph_sb + kk * 2048, " +
                     std::to_string(k_.regs[d.b].type.shape[0] * 128) + ", 1024);"
               : "  const tc::tile::u64 db = tc::tile::make_smem_desc_sw128(ph_sb + kk * 32, 16, "
                 "1024);");
  line("  tc::tile::Wgmma16<" + std::to_string(l.C) + ", " + ty + ", 0, " + (n_major ? "1" : "0") +
       ">::run(" + acc + ", da, db, 1u);");
  line("}");
  line("tc::tile::wgmma_commit();");
  // Inside a cp.async pipeline with 3+ stages the batch may run on into the next step (see
  // async_pipeline); elsewhere it is finished before anything else touches the tiles.
  line(wgmma_overlap_ ? "tc::tile::wgmma_wait<1>();" : "tc::tile::wgmma_wait<0>();");
  if (!p_.ws) line("tc::tile::reg_fence(" + acc + ");");
  close();
}

}  // namespace phobos::cuda_emit
