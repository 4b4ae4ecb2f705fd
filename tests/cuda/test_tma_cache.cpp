// tile/tma_host.h: tma_encode_3d serves repeated maps from a per-thread cache (the same map
// copied; the same geometry at another base copied and re-based with
// cuTensorMapReplaceAddress). Every map it returns must be the bytes a fresh
// cuTensorMapEncodeTiled gives for the same arguments, through every path of the cache: first
// encode, exact repeat, new base, geometries that collide in a slot, batched maps, and a base
// the driver refuses. Needs a driver (not a GPU kernel): skips where there is none.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#ifdef TC_TEST_HAVE_PEER
#include "cuda/tile/tma_host.h"
#endif

namespace tc::test {
namespace {

#ifdef TC_TEST_HAVE_PEER
struct Call {
  uintptr_t base;
  uint32_t esz;
  uint64_t inner, outer, batch, pitch, batch_pitch;
  uint32_t box_inner, box_outer;
};

bool fresh(tile::TmaMap* m, const Call& c) {
  const tile::TmaGeometry g{
      c.inner, c.outer,     c.batch,    c.pitch, c.batch <= 1 ? 0 : c.batch_pitch,
      c.esz,   c.box_inner, c.box_outer};
  return tile::tma_encode_uncached(m, reinterpret_cast<const void*>(c.base), g);
}
#endif

TEST(TmaCache, EveryPathGivesTheBytesOfAFreshEncode) {
#ifndef TC_TEST_HAVE_PEER
  GTEST_SKIP() << "this build has no CUDA toolkit";
#else
  if (!tile::tma_encoder()) GTEST_SKIP() << "no CUDA driver (cuTensorMapEncodeTiled)";
  // The encoder needs an initialized driver: alone in its process (ctest runs each test so) the
  // first encode failed on the H200 (2026-11-30 00:56 UTC) where the same test passed after
  // other tests had made the device's context. tc's own calls encode only after their buffers
  // exist; here the runtime's first call makes the primary context.
  if (cudaFree(nullptr) != cudaSuccess) GTEST_SKIP() << "no usable CUDA device";
  const uintptr_t base = uintptr_t(1) << 36;  // encoding never dereferences the address
  std::vector<Call> calls;
  for (int rep = 0; rep < 3; ++rep) {
    for (int k = 0; k < 24; ++k) {  // 24 bases over 3 geometries: misses, hits, replaces
      const uint64_t n = 256 << (k % 3);
      calls.push_back({base + uintptr_t(k) * 4096 * 16, 2, n, n, 1, n * 2, 0, 64, 128});
      calls.push_back({base + uintptr_t(k) * 4096 * 16 + 1024, 1, n, n, 1, n, 0, 128, 128});
    }
    calls.push_back({base, 4, 1000, 333, 3, 4096, 4096 * 400, 32, 64});  // batched
    calls.push_back({base + 48, 4, 1000, 333, 3, 4096, 4096 * 400, 32, 64});
    calls.push_back({base, 2, 4095, 4097, 1, 8192, 0, 64, 256});
  }
  int checked = 0;
  for (const Call& c : calls) {
    tile::TmaMap got{}, want{};
    std::memset(&got, 0xab, sizeof got);
    const bool ok =
        tile::tma_encode_3d(&got, reinterpret_cast<const void*>(c.base), c.esz, c.inner, c.outer,
                            c.batch, c.pitch, c.batch_pitch, c.box_inner, c.box_outer);
    ASSERT_TRUE(ok) << "base " << c.base << " inner " << c.inner;
    ASSERT_TRUE(fresh(&want, c));
    ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0)
        << "base " << c.base << " inner " << c.inner << " batch " << c.batch;
    ++checked;
  }
  EXPECT_EQ(checked, int(calls.size()));
  // A base the driver refuses (not 16-byte aligned) fails, whatever the cache holds.
  tile::TmaMap m{};
  EXPECT_FALSE(tile::tma_encode_3d(&m, reinterpret_cast<const void*>(base + 8), 2, 256, 256, 1, 512,
                                   0, 64, 128));
#endif
}

}  // namespace
}  // namespace tc::test
