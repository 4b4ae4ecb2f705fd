// The lab's case list (correctness on odd shapes first, then the issue's timed shapes) and
// the bridge from a case to its kernel family's planner and launcher.
#include "lab_cases.h"

namespace lab {
namespace {

// A GEMM case with contiguous (or padded by `pad` elements) leading dimensions.
Case gemm(const char* name, Kind kind, tc_dtype_t in, tc_dtype_t out, int M, int N, int K, bool ta,
          bool tb, float alpha = 1.f, float beta = 0.f, int pad = 0) {
  Case c;
  c.name = name;
  c.kind = kind;
  c.d.M = M;
  c.d.N = N;
  c.d.K = K;
  c.d.a_dtype = c.d.b_dtype = in;
  c.d.c_dtype = out;
  c.d.accum_dtype = in == TC_DTYPE_I8 ? TC_DTYPE_I32 : TC_DTYPE_F32;
  c.d.transpose_a = ta;
  c.d.transpose_b = tb;
  c.d.alpha = alpha;
  c.d.beta = beta;
  c.d.lda = (ta ? M : K) + pad;
  c.d.ldb = (tb ? K : N) + pad;
  c.d.ldc = N + pad;
  return c;
}

Case timed(Case c) {
  c.timed = true;
  return c;
}

std::vector<Case> make_cases() {
  std::vector<Case> v;
  const tc_dtype_t BF = TC_DTYPE_BF16, F16 = TC_DTYPE_F16, F32 = TC_DTYPE_F32;
  const Kind W = Kind::wgmma;
  // --- wgmma correctness: every transpose, odd shapes, alpha/beta, output types -------------
  const char* tn[4] = {"nn", "nt", "tn", "tt"};
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 2, tb = t & 1;
    v.push_back(gemm(("wgmma_bf16_bf16_" + std::string(tn[t]) + "_257x383x191").c_str(), W, BF, BF,
                     257, 383, 191, ta, tb));
    v.push_back(gemm(("wgmma_f16_f32_" + std::string(tn[t]) + "_131x520x200_ab").c_str(), W, F16,
                     F32, 131, 520, 200, ta, tb, 1.5f, -0.5f));
    v.push_back(gemm(("wgmma_bf16_f32_" + std::string(tn[t]) + "_odd_ld_77x91x103").c_str(), W, BF,
                     F32, 77, 91, 103, ta, tb, 1.f, 0.f, 3));
  }
  v.push_back(gemm("wgmma_f16_f16_nn_1x1x1", W, F16, F16, 1, 1, 1, false, false));
  v.push_back(gemm("wgmma_bf16_bf16_nn_600x1000x1024_beta", W, BF, BF, 600, 1000, 1024, false,
                   false, 0.75f, 0.25f));
  v.push_back(gemm("wgmma_bf16_f32_nt_64x264x8192_splitk", W, BF, F32, 64, 264, 8192, false, true));
  {
    Case c =
        gemm("wgmma_bf16_bf16_nn_misaligned_ptr_100x136x72", W, BF, BF, 100, 136, 72, false, false);
    c.a_offset = 2;  // 2-byte aligned A: TMA-illegal base, packed path
    c.c_offset = 2;
    v.push_back(c);
  }
  {
    Case c = gemm("wgmma_bf16_bf16_nt_batched3_129x200x72", W, BF, BF, 129, 200, 72, false, true);
    c.batch = 3;
    c.stride_a = int64_t(129) * 72 + 8;
    c.stride_b = 0;  // broadcast B
    c.stride_c = int64_t(129) * 200 + 5;
    v.push_back(c);
  }
  // --- every tile on every transpose, through the TMA-store epilogue (ldc 392: legal) -------
  for (int t = 0; t < 4; ++t)
    for (int var : {1, 2, 8, 9}) {
      Case c = gemm(
          ("wgmma_bf16_bf16_" + std::string(tn[t]) + "_v" + std::to_string(var) + "_257x392x191")
              .c_str(),
          W, BF, BF, 257, 392, 191, t & 2, t & 1);
      c.variant = var;
      v.push_back(c);
    }
  {
    Case c =
        gemm("wgmma_bf16_f32_tn_v1_tma_f32_200x520x136", W, BF, F32, 200, 520, 136, true, false);
    c.variant = 1;  // f32 C at BN 256: four rounds of the epilogue buffer
    v.push_back(c);
    c = gemm("wgmma_f16_f32_nt_v9_tma_f32_100x136x72", W, F16, F32, 100, 136, 72, false, true);
    c.variant = 9;
    v.push_back(c);
    c = gemm("wgmma_f16_f16_tt_v8_direct_130x264x72", W, F16, F16, 130, 264, 72, true, true);
    c.variant = 8;
    c.env = "TC_WGMMA_EPILOGUE=direct";
    v.push_back(c);
    c = gemm("wgmma_bf16_bf16_nt_batched3_tma_129x200x72", W, BF, BF, 129, 200, 72, false, true);
    c.batch = 3;
    c.stride_a = int64_t(129) * 72 + 8;
    c.stride_b = 0;
    c.stride_c = int64_t(129) * 200;  // 16-byte pitch: TMA-store epilogue, 3-D map
    v.push_back(c);
  }
  // --- timed (issue 3's table) ------------------------------------------------------------
  v.push_back(timed(gemm("bf16_nn_4096^3", W, BF, BF, 4096, 4096, 4096, false, false)));
  v.push_back(timed(gemm("f16_nn_4096^3", W, F16, F16, 4096, 4096, 4096, false, false)));
  {
    Case c =
        timed(gemm("bf16_nn_4096^3_direct_epilogue", W, BF, BF, 4096, 4096, 4096, false, false));
    c.env = "TC_WGMMA_EPILOGUE=direct";  // the previous epilogue, for a same-run comparison
    v.push_back(c);
  }
  v.push_back(timed(gemm("bf16_nn_8192^3", W, BF, BF, 8192, 8192, 8192, false, false)));
  v.push_back(timed(gemm("f16_nn_8192^3", W, F16, F16, 8192, 8192, 8192, false, false)));
  v.push_back(timed(gemm("bf16_nt_4096^3", W, BF, BF, 4096, 4096, 4096, false, true)));
  v.push_back(timed(gemm("bf16_tn_4096^3", W, BF, BF, 4096, 4096, 4096, true, false)));
  v.push_back(timed(gemm("bf16_nn_4095x4097x4099", W, BF, BF, 4095, 4097, 4099, false, false)));
  {  // same-run A/B of the operand swap (544 tiles -> 528 = 4 waves), and the swap forced on
    // odd shapes with alpha/beta in every transpose (checked against float64 and cuBLAS)
    Case c =
        timed(gemm("bf16_nn_4095x4097x4099_noswap", W, BF, BF, 4095, 4097, 4099, false, false));
    c.env = "TC_WGMMA_SWAP=0";
    v.push_back(c);
    for (int t = 0; t < 4; ++t) {
      Case s = gemm(("wgmma_swap_bf16_f32_" + std::string(tn[t]) + "_odd_ld_77x91x103_ab").c_str(),
                    W, BF, F32, 77, 91, 103, t & 2, t & 1, 1.5f, -0.5f, 3);
      s.env = "TC_WGMMA_SWAP=1";
      v.push_back(s);
    }
  }
  // Same shape, leading dimensions 4097 (A, B packed; C unaligned) and 4104 (all TMA-legal).
  v.push_back(
      timed(gemm("bf16_nn_4096^3_ld4097", W, BF, BF, 4096, 4096, 4096, false, false, 1, 0, 1)));
  v.push_back(
      timed(gemm("bf16_nn_4096^3_ld4104", W, BF, BF, 4096, 4096, 4096, false, false, 1, 0, 8)));
  {
    Case c = timed(gemm("bf16_nn_4096^3_ld4104_nopack128", W, BF, BF, 4096, 4096, 4096, false,
                        false, 1, 0, 8));
    c.env = "TC_WGMMA_PACK128=0";
    v.push_back(c);
  }
  v.push_back(timed(gemm("bf16_nn_1000^3", W, BF, BF, 1000, 1000, 1000, false, false)));
  v.push_back(timed(gemm("bf16_nn_127x4096x4096", W, BF, BF, 127, 4096, 4096, false, false)));
  {  // programmatic dependent launch off, for a same-run comparison
    Case c = timed(gemm("bf16_nn_1000^3_no_pdl", W, BF, BF, 1000, 1000, 1000, false, false));
    c.env = "TC_GEMM_PDL=0";
    v.push_back(c);
    c = timed(gemm("bf16_nn_127x4096x4096_no_pdl", W, BF, BF, 127, 4096, 4096, false, false));
    c.env = "TC_GEMM_PDL=0";
    v.push_back(c);
  }
  v.push_back(timed(gemm("bf16_nn_8192x128x8192", W, BF, BF, 8192, 128, 8192, false, false)));
  {
    Case c = timed(gemm("bf16_nn_batched32_512^3", W, BF, BF, 512, 512, 512, false, false));
    c.batch = 32;
    c.stride_a = c.stride_b = c.stride_c = 512 * 512;
    v.push_back(c);
    c.name = "bf16_nn_batched32_512^3_direct_epilogue";
    c.env = "TC_WGMMA_EPILOGUE=direct";
    v.push_back(c);
  }
  // --- int8 -> int32 (exact); wgmma s8 is K-major only: nn/tt/tn pack through the workspace -
  const tc_dtype_t I8 = TC_DTYPE_I8, I32 = TC_DTYPE_I32;
  for (int t = 0; t < 4; ++t)
    v.push_back(gemm(("wgmma_s8_s32_" + std::string(tn[t]) + "_130x264x200").c_str(), W, I8, I32,
                     130, 264, 200, t & 2, t & 1, 1.f, t == 1 ? 1.f : 0.f));
  v.push_back(
      gemm("wgmma_s8_s32_nt_odd_77x91x103", W, I8, I32, 77, 91, 103, false, true, 1.f, 0.f, 3));
  v.push_back(timed(gemm("s8_nt_4096^3", W, I8, I32, 4096, 4096, 4096, false, true)));
  v.push_back(timed(gemm("s8_nt_8192^3", W, I8, I32, 8192, 8192, 8192, false, true)));
  {
    Case c = timed(gemm("s8_nt_4096^3_direct_epilogue", W, I8, I32, 4096, 4096, 4096, false, true));
    c.env = "TC_WGMMA_EPILOGUE=direct";
    v.push_back(c);
  }
  v.push_back(timed(gemm("s8_nn_4096^3_packed", W, I8, I32, 4096, 4096, 4096, false, false)));
  // --- mma.sync fallback: any ld / alignment / transposes ----------------------------------
  const Kind MM = Kind::mma;
  for (int t = 0; t < 4; ++t) {
    v.push_back(gemm(("mma_bf16_bf16_" + std::string(tn[t]) + "_odd_ld_131x77x93_ab").c_str(), MM,
                     BF, BF, 131, 77, 93, t & 2, t & 1, 0.5f, 2.0f, 1));
    v.push_back(gemm(("mma_f16_f32_" + std::string(tn[t]) + "_200x264x128").c_str(), MM, F16, F32,
                     200, 264, 128, t & 2, t & 1));
  }
  {
    Case c = gemm("mma_f16_f16_nt_batched2_misaligned", MM, F16, F16, 70, 90, 50, false, true);
    c.batch = 2;
    c.stride_a = 70 * 50 + 1;
    c.stride_b = 90 * 50 + 3;
    c.stride_c = 70 * 90 + 1;
    c.a_offset = 2;
    v.push_back(c);
  }
  v.push_back(
      timed(gemm("mma_bf16_nn_4095x4097x4099", MM, BF, BF, 4095, 4097, 4099, false, false)));
  v.push_back(timed(gemm("mma_bf16_nt_4096^3", MM, BF, BF, 4096, 4096, 4096, false, true)));
  // --- decode (M <= 16): B = weights stored N x K ------------------------------------------
  const Kind SK = Kind::skinny;
  v.push_back(
      gemm("skinny_bf16_bf16_m5_1000x520_ab", SK, BF, BF, 5, 1000, 520, false, true, 0.5f, 1.0f));
  v.push_back(gemm("skinny_f16_f32_m16_77x8200", SK, F16, F32, 16, 77, 8200, false, true));
  for (int m : {1, 4, 16}) {
    const int shapes[3][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}};  // N x K
    for (auto& nk : shapes) {
      const std::string name = "decode_f16_m" + std::to_string(m) + "_W" + std::to_string(nk[0]) +
                               "x" + std::to_string(nk[1]);
      Case c = timed(gemm(name.c_str(), SK, F16, F16, m, nk[0], nk[1], false, true));
      c.decode = true;
      v.push_back(c);
      if (m == 1 && nk[0] == 4096 && nk[1] == 4096) {
        Case n = c;
        n.name += "_no_pdl";
        n.env = "TC_GEMM_PDL=0";
        v.push_back(n);
      }
      if (nk[0] == 4096 || m == 1) {  // same-run A/B: one CTA per row block, no L2 prefetch
        c.name += "_no_persist";
        c.env = "TC_SKINNY_PERSIST=0";
        v.push_back(c);
      }
    }
  }
  // --- wgmma variant sweep on the shapes the heuristic serves worst ------------------------
  for (int var = 1; var <= tc::cuda::gemm_wgmma_variant_count(); ++var) {
    const int shapes[4][3] = {
        {1000, 1000, 1000}, {127, 4096, 4096}, {8192, 128, 8192}, {4095, 4097, 4099}};
    for (auto& s : shapes) {
      const std::string name = "sweep_v" + std::to_string(var) + "_bf16_" + std::to_string(s[0]) +
                               "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
      Case c = timed(gemm(name.c_str(), W, BF, BF, s[0], s[1], s[2], false, false));
      c.variant = var;
      v.push_back(c);
    }
  }
  // --- f32 exact (SIMT) --------------------------------------------------------------------
  const Kind FK = Kind::f32;
  for (int t = 0; t < 4; ++t)
    v.push_back(gemm(("f32_" + std::string(tn[t]) + "_odd_ld_133x71x301_ab").c_str(), FK, F32, F32,
                     133, 71, 301, t & 2, t & 1, 1.25f, -0.75f, 1));
  v.push_back(timed(gemm("f32_nn_4096^3", FK, F32, F32, 4096, 4096, 4096, false, false)));
  v.push_back(timed(gemm("f32_nn_8192^3", FK, F32, F32, 8192, 8192, 8192, false, false)));
  // --- f32 on the tensor cores, 3xTF32 (same 1e-6 bound) -----------------------------------
  const Kind T3 = Kind::tf32x3;
  for (int t = 0; t < 4; ++t) {
    v.push_back(gemm(("tf32x3_" + std::string(tn[t]) + "_odd_ld_133x71x301_ab").c_str(), T3, F32,
                     F32, 133, 71, 301, t & 2, t & 1, 1.25f, -0.75f, 1));
    v.push_back(gemm(("tf32x3_" + std::string(tn[t]) + "_tma_300x264x1000").c_str(), T3, F32, F32,
                     300, 264, 1000, t & 2, t & 1));
  }
  v.push_back(gemm("tf32x3_nt_k8192_64x136x8192", T3, F32, F32, 64, 136, 8192, false, true));
  v.push_back(timed(gemm("tf32x3_nn_4096^3", T3, F32, F32, 4096, 4096, 4096, false, false)));
  v.push_back(timed(gemm("tf32x3_nt_4096^3", T3, F32, F32, 4096, 4096, 4096, false, true)));
  v.push_back(timed(gemm("tf32x3_nn_8192^3", T3, F32, F32, 8192, 8192, 8192, false, false)));
  for (int var : {2, 3}) {  // longer tensor-core chunks: faster, less accurate
    Case c = timed(gemm(("tf32x3_nn_4096^3_chunk" + std::to_string(32 << (var - 1))).c_str(), T3,
                        F32, F32, 4096, 4096, 4096, false, false));
    c.variant = var;
    v.push_back(c);
  }
  // --- last (a hang here loses nothing else): 2-CTA clusters with B multicast, variant 11 ----
  for (int t = 0; t < 4; ++t) {
    Case c = gemm(("mcast_bf16_bf16_" + std::string(tn[t]) + "_257x392x191").c_str(), W, BF, BF,
                  257, 392, 191, t & 2, t & 1);
    c.variant = 11;  // 3 M tiles: the second pair's lower tile lies past M
    v.push_back(c);
  }
  {
    Case c = gemm("mcast_f16_f32_nn_ab_300x600x200", W, F16, F32, 300, 600, 200, false, false, 1.5f,
                  -0.5f);
    c.variant = 11;
    v.push_back(c);
    c = gemm("mcast_s8_s32_nt_260x520x256", W, I8, I32, 260, 520, 256, false, true);
    c.variant = 11;
    v.push_back(c);
  }
  for (const char* n : {"mcast_bf16_nn_4096^3", "mcast_f16_nn_4096^3", "mcast_bf16_nt_4096^3",
                        "mcast_bf16_nn_8192^3", "mcast_s8_nt_4096^3", "mcast_s8_nt_8192^3"}) {
    const std::string name = n;
    const bool s8 = name.find("s8") != std::string::npos;
    const int sz = name.find("8192") != std::string::npos ? 8192 : 4096;
    const tc_dtype_t in = s8 ? I8 : name.find("f16") == 6 ? F16 : BF;
    Case c = timed(gemm(n, W, in, s8 ? I32 : in, sz, sz, sz, false,
                        s8 || name.find("_nt_") != std::string::npos));
    c.variant = 11;
    v.push_back(c);
  }
  return v;
}

}  // namespace

const std::vector<Case>& lab_cases() {
  static const std::vector<Case> cases = make_cases();
  return cases;
}

bool plan_case(const Case& c, const tc::GemmProblem& p, const tc::cuda::GemmDevice& dev,
               Instance* inst, std::string& why) {
  bool ok = false;
  switch (c.kind) {
    case Kind::wgmma:
      ok = tc::cuda::plan_gemm_wgmma(p, dev, &inst->plan, why);
      break;
    case Kind::mma:
      ok = tc::cuda::plan_gemm_mma(p, dev, &inst->plan, why);
      break;
    case Kind::skinny:
      ok = tc::cuda::plan_gemm_skinny(p, dev, &inst->plan, why);
      break;
    case Kind::f32:
      ok = tc::cuda::plan_gemm_f32(p, dev, &inst->plan, why);
      break;
    case Kind::tf32x3:
      ok = tc::cuda::plan_gemm_tf32x3(p, dev, &inst->plan, why);
      break;
    default:
      why = "kernel family not built into this lab";
      return false;
  }
  inst->name = inst->plan.name;
  inst->workspace_bytes = inst->plan.workspace_bytes;
  return ok;
}

tc_status_t run_case(const Case& c, const tc::GemmProblem& p, const Instance& inst, void* ws) {
  switch (c.kind) {
    case Kind::wgmma:
      return tc::cuda::launch_gemm_wgmma(p, inst.plan, ws);
    case Kind::mma:
      return tc::cuda::launch_gemm_mma(p, inst.plan);
    case Kind::skinny:
      return tc::cuda::launch_gemm_skinny(p, inst.plan);
    case Kind::f32:
      return tc::cuda::launch_gemm_f32(p, inst.plan);
    case Kind::tf32x3:
      return tc::cuda::launch_gemm_tf32x3(p, inst.plan, ws);
    default:
      return TC_ERROR_NOT_SUPPORTED;
  }
}

}  // namespace lab
