// Tensor maps for the warp-specialized TMA form; see tma_launch.h.
#include "tma_launch.h"

#ifdef PHOBOS_HAVE_CUDART
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace phobos {

static_assert(sizeof(TmaMapHost) == sizeof(CUtensorMap), "TmaMapHost must mirror CUtensorMap");

// The driver's encoder through the runtime (phobos never links libcuda), looked up once.
static PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

bool tma_legal(const std::vector<passes::Plan::TmaOperand>& ops, const BoundArgs& b) {
  for (auto& op : ops) {
    const TensorView& t = b.tensors[op.arg];
    if (t.shape.size() != 2 || t.shape[0] < 1 || t.shape[1] < 1) return false;
    if (reinterpret_cast<uintptr_t>(t.data) % 16 || (t.shape[1] * 2) % 16) return false;
    if (t.shape[1] >= (int64_t(1) << 32) || t.shape[0] >= (int64_t(1) << 32)) return false;
  }
  return encoder() != nullptr;
}

bool tma_encode(const passes::Plan::TmaOperand& op, const BoundArgs& b, TmaMapHost* map) {
  auto enc = encoder();
  const TensorView& t = b.tensors[op.arg];
  if (!enc) return false;
  const cuuint64_t inner = static_cast<cuuint64_t>(t.shape[1]);
  const cuuint64_t outer = static_cast<cuuint64_t>(t.shape[0]);
  cuuint64_t dims[3] = {inner, outer, 1};
  cuuint64_t strides[2] = {inner * 2, inner * 2 * outer};
  // kind 1: the whole K-major tile [rows][64] in one box; kind 2: 64 x 64 boxes (one per
  // 64-column atom of an N-major tile).
  cuuint32_t box[3] = {64, static_cast<cuuint32_t>(op.kind == 1 ? op.rows : 64), 1};
  cuuint32_t estr[3] = {1, 1, 1};
  CUresult r =
      enc(reinterpret_cast<CUtensorMap*>(map), CU_TENSOR_MAP_DATA_TYPE_UINT16, 3, t.data, dims,
          strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

}  // namespace phobos

#endif
