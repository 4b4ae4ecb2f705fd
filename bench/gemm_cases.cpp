#include "gemm_cases.h"

#include <fmt/format.h>

namespace tc::bench {

bool case_dtypes(const std::string& name, tc_dtype_t* in, tc_dtype_t* out, tc_dtype_t* accum) {
  if (name == "f32" || name == "tf32") {
    *in = *out = TC_DTYPE_F32;
    *accum = name == "tf32" ? TC_DTYPE_TF32 : TC_DTYPE_F32;
  } else if (name == "f16" || name == "bf16") {
    *in = *out = name == "f16" ? TC_DTYPE_F16 : TC_DTYPE_BF16;
    *accum = TC_DTYPE_F32;
  } else if (name == "i8") {
    *in = TC_DTYPE_I8;
    *out = *accum = TC_DTYPE_I32;
  } else {
    return false;
  }
  return true;
}

std::vector<GemmCase> gemm_cases(const CaseOptions& o) {
  std::vector<GemmCase> v;
  auto has = [&](const char* s) {
    for (auto& x : o.suites)
      if (x == s) return true;
    return false;
  };
  if (has("sweep")) {
    std::vector<int> sizes = o.sizes;
    if (o.large) sizes.push_back(8192);
    for (auto& dt : o.dtypes)
      for (int s : sizes) {
        GemmCase c{"sweep", fmt::format("{} {}^3", dt, s), dt, s, s, s};
        if (dt == "i8") c.tb = true, c.label += " NT";
        v.push_back(c);
      }
  }
  if (has("shapes")) {
    const int odd[][3] = {
        {4095, 4097, 4099}, {1000, 1000, 1000}, {127, 4096, 4096}, {8192, 128, 8192}};
    for (auto& s : odd)
      v.push_back(
          {"shapes", fmt::format("bf16 {}x{}x{}", s[0], s[1], s[2]), "bf16", s[0], s[1], s[2]});
    v.push_back({"shapes", "bf16 4096^3 NT", "bf16", 4096, 4096, 4096, 1, false, true});
    v.push_back({"shapes", "bf16 4096^3 TN", "bf16", 4096, 4096, 4096, 1, true, false});
    v.push_back({"shapes", "f16 4096^3 NT", "f16", 4096, 4096, 4096, 1, false, true});
    v.push_back({"shapes", "bf16 batched 32x512^3", "bf16", 512, 512, 512, 32});
  }
  if (has("decode")) {
    const int w[][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}};
    for (auto& nk : w)
      for (int m = 1; m <= 32; ++m)
        v.push_back({"decode", fmt::format("f16 M={} W {}x{}", m, nk[0], nk[1]), "f16", m, nk[0],
                     nk[1], 1, false, true, true});
  }
  return v;
}

}  // namespace tc::bench
