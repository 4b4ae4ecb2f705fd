// Tensor maps for the warp-specialized TMA form; see tma_launch.h.
#include "tma_launch.h"

#ifdef PHOBOS_HAVE_CUDART
#include <cstdint>

#include "tma_host.h"

namespace phobos {

bool tma_legal(const std::vector<passes::Plan::TmaOperand>& ops, const BoundArgs& b) {
  for (auto& op : ops) {
    const TensorView& t = b.tensors[op.arg];
    if (t.shape.size() != 2 || t.shape[0] < 1 || t.shape[1] < 1) return false;
    if (!tc::tile::tma_base_ok(t.data) || !tc::tile::tma_pitch_ok(uint64_t(t.shape[1]) * 2))
      return false;
    if (t.shape[1] >= (int64_t(1) << 32) || t.shape[0] >= (int64_t(1) << 32)) return false;
  }
  return tc::tile::tma_encoder() != nullptr;
}

bool tma_encode(const passes::Plan::TmaOperand& op, const BoundArgs& b, TmaMapHost* map) {
  const TensorView& t = b.tensors[op.arg];
  const uint64_t inner = uint64_t(t.shape[1]), outer = uint64_t(t.shape[0]);
  // 16-bit elements, one matrix. kind 1: the whole K-major tile [rows][64] in one box; kind 2:
  // 64 x 64 boxes (one per 64-column atom of an N-major tile).
  return tc::tile::tma_encode_3d(map, t.data, 2, inner, outer, 1, inner * 2, 0, 64,
                                 uint32_t(op.kind == 1 ? op.rows : 64));
}

}  // namespace phobos

#endif
