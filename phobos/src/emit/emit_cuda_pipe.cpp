// CUDA emitter, shared memory: fills of shared tiles (16-byte chunks with run-time bounds and
// alignment checks, element-wise otherwise) and the two forms of @pipeline (cp.async with up to
// 4 stages, or a register-staged double buffer); see docs/phobos.md "Attributes".
#include <algorithm>

#include "emit_cuda.h"

namespace phobos::cuda_emit {

// 16-byte chunks: a shared tile filled straight from a tensor slice of its own element type
// (no conversion) whose rows are whole chunks moves 16 bytes per load and store. A chunk
// takes the vector path when it is in bounds and its global address is 16-byte aligned
// (checked at run time, so ragged shapes and odd leading dimensions stay correct).
int64_t CudaEmitter::vec_width(int reg, const NodeP& v) const {
  const VType& t = k_.regs[reg].type;
  if (t.shape.size() != 2 || v->op != Op::Load || v->idx < 0 || v->type.dt != t.dt) return 0;
  int tiled = 0;
  for (auto& s : v->slices) tiled += !s.point;
  if (tiled != 2 || v->slices.back().point) return 0;
  int64_t V = 16 / static_cast<int64_t>(dtype_size(t.dt));
  if (V < 2 || t.shape[1] % V || p_.pitch_of(k_, reg) % V) return 0;
  return V;
}

// Emits `uint4 dst` = the V elements of load v starting at tile element (r, c).
void CudaEmitter::vec_load(const NodeP& v, int64_t V, const std::string& r, const std::string& c,
                           const std::string& dst, bool declare) {
  std::string off, pred, off2, pred_last;
  load_addr(*v, r, c, "0", &off, &pred);
  load_addr(*v, r, "(" + c + " + " + std::to_string(V - 1) + ")", "0", &off2, &pred_last);
  const char* ty = ctype(v->type.dt);
  if (declare) line("uint4 " + dst + ";");
  line("{");
  ++ind_;
  line("const " + std::string(ty) + "* ph_src = &" + k_.args[v->idx].name + "[" + off + "];");
  std::string ok = "(reinterpret_cast<unsigned long long>(ph_src) & 15) == 0";
  if (!pred.empty()) ok = pred + " && " + pred_last + " && " + ok;
  line("if (" + ok + ") {");
  line("  " + dst + " = *reinterpret_cast<const uint4*>(ph_src);");
  line("} else {");
  ++ind_;
  line("__align__(16) " + std::string(ty) + " ph_t[" + std::to_string(V) + "];");
  line("#pragma unroll");
  line("for (int ph_v = 0; ph_v < " + std::to_string(V) + "; ++ph_v) {");
  ++ind_;
  std::string o3, p3;
  load_addr(*v, r, "(" + c + " + ph_v)", "0", &o3, &p3);
  (void)o3;
  std::string zero = store_cast(v->type.dt, "0.0f");
  line("ph_t[ph_v] = " + (p3.empty() ? "ph_src[ph_v]" : "(" + p3 + ") ? ph_src[ph_v] : " + zero) +
       ";");
  close();
  line(dst + " = *reinterpret_cast<const uint4*>(ph_t);");
  close();
  close();
}

// Element (r, c) of a 2-D shared tile within one stage: padded row-major, or the 128-byte
// swizzle wgmma reads (16-byte chunk index XOR row % 8 inside each 128-byte row).
std::string CudaEmitter::smem_idx(int reg, const std::string& r, const std::string& c) const {
  auto sw = p_.swizzle.find(reg);
  if (sw == p_.swizzle.end())
    return "(" + r + ") * " + std::to_string(p_.pitch_of(k_, reg)) + " + (" + c + ")";
  if (sw->second == 1) return "ph_sw128_k(" + r + ", " + c + ")";
  return "ph_sw128_n(" + r + ", " + c + ", " + std::to_string(k_.regs[reg].type.shape[0]) + ")";
}

std::string CudaEmitter::smem_at(int reg, const std::string& stage, const std::string& r,
                                 const std::string& c, const std::string& e) const {
  const VType& t = k_.regs[reg].type;
  std::string idx = t.shape.size() == 2 ? smem_idx(reg, r, c) : e;
  return cname(k_, reg) + "[" +
         (stage.empty() ? "" : stage + " * " + std::to_string(p_.smem_elems(k_, reg)) + " + ") +
         idx + "]";
}

void CudaEmitter::smem_fill(int reg, const NodeP& v, const std::string& stage) {
  const VType& t = k_.regs[reg].type;
  std::string r, c, e;
  if (int64_t V = vec_width(reg, v)) {
    std::vector<int64_t> chunks = {t.shape[0], t.shape[1] / V};
    open_all(chunks, &r, &c, &e);
    std::string col = "(" + c + ") * " + std::to_string(V);
    vec_load(v, V, r, col, "ph_chunk", true);
    line("*reinterpret_cast<uint4*>(&" + smem_at(reg, stage, r, col, e) + ") = ph_chunk;");
    close();
    return;
  }
  open_all(t.shape, &r, &c, &e);
  line(smem_at(reg, stage, r, c, e) + " = " + store_cast(t.dt, elem(v, r, c, e)) + ";");
  close();
}

// Issues the copies of operand `reg` for one step into stage `stage`: 16-byte cp.async per
// chunk that is in bounds and aligned, else plain shared stores with zero fill (the step
// reading them is behind a barrier either way).
void CudaEmitter::async_fill(int reg, const NodeP& v, const std::string& stage) {
  const VType& t = k_.regs[reg].type;
  int64_t V = vec_width(reg, v), w = t.shape[1] / V, items = t.shape[0] * w;
  int64_t n = (items + k_.threads - 1) / k_.threads;
  std::string j = fresh("j");
  line("#pragma unroll");
  line("for (int " + j + " = 0; " + j + " < " + std::to_string(n) + "; ++" + j + ") {");
  ++ind_;
  line("const int e_ = tid + " + j + " * " + std::to_string(k_.threads) + ";");
  if (items % k_.threads) line("if (e_ >= " + std::to_string(items) + ") break;");
  line("const int r_ = e_ / " + std::to_string(w) + ", c_ = (e_ % " + std::to_string(w) + ") * " +
       std::to_string(V) + ";");
  std::string off, pred, off2, pred_last;
  load_addr(*v, "r_", "c_", "0", &off, &pred);
  load_addr(*v, "r_", "(c_ + " + std::to_string(V - 1) + ")", "0", &off2, &pred_last);
  const char* ty = ctype(t.dt);
  line("const " + std::string(ty) + "* ph_src = &" + k_.args[v->idx].name + "[" + off + "];");
  line(std::string(ty) + "* ph_dst = &" + smem_at(reg, stage, "r_", "c_", "e_") + ";");
  std::string ok = "(reinterpret_cast<unsigned long long>(ph_src) & 15) == 0";
  if (!pred.empty()) ok = pred + " && " + pred_last + " && " + ok;
  line("if (" + ok + ") {");
  line("  ph_cp_async16(ph_dst, ph_src);");
  line("} else {");
  ++ind_;
  line("#pragma unroll");
  line("for (int ph_v = 0; ph_v < " + std::to_string(V) + "; ++ph_v)");
  std::string o3, p3;
  load_addr(*v, "r_", "(c_ + ph_v)", "0", &o3, &p3);
  std::string zero = store_cast(t.dt, "0.0f");
  line("  ph_dst[ph_v] = " +
       (p3.empty() ? "ph_src[ph_v]" : "(" + p3 + ") ? ph_src[ph_v] : " + zero) + ";");
  close();
  close();
}

// @pipeline with cp.async, S = p_.stages: steps 0 .. S-2 are in flight before the loop; at
// each step a thread waits for its own copies of this step (wait_group S-2), one barrier makes
// everyone's visible and retires the stage read by the previous step, which is then refilled
// with step + S-1 while this step computes. One barrier per step.
void CudaEmitter::async_pipeline(const Stmt& s, const std::map<int, const Stmt*>& defs,
                                 const std::string& v, const std::string& lo, const std::string& hi,
                                 const std::string& st) {
  std::string S = std::to_string(p_.stages);
  // Copies run D steps ahead. With wgmma and 3+ stages, D = S - 2 and each step's wgmma batch
  // is left running while the next step starts (wait_group 1): the stage refilled at step i
  // (i + D) % S was read by batch i - 2, which the previous step's wait retired.
  bool overlap = p_.wgmma && p_.stages >= 3;
  int64_t D = overlap ? p_.stages - 2 : p_.stages - 1;
  std::string Ds = std::to_string(D);
  line("{");
  ++ind_;
  line("#pragma unroll");
  line("for (int ph_s = 0; ph_s < " + Ds + "; ++ph_s) {");
  ++ind_;
  line("const int ph_kt = " + lo + " + ph_s * " + st + ";");
  line("if (ph_kt < " + hi + ") {");
  ++ind_;
  override_[s.reg] = "ph_kt";
  for (auto& [r, d] : defs) async_fill(r, d->value, "ph_s");
  override_.erase(s.reg);
  close();
  line("ph_cp_async_commit();");
  close();
  line("int ph_stage = 0;");
  if (s.unroll > 1) line("#pragma unroll " + std::to_string(s.unroll));
  line("for (int " + v + " = " + lo + "; " + v + " < " + hi + "; " + v + " += " + st + ") {");
  ++ind_;
  line("ph_cp_async_wait<" + std::to_string(D - 1) + ">();");
  sync();
  line("{");
  ++ind_;
  line("const int ph_kt = " + v + " + " + Ds + " * " + st + ";");
  line("const int ph_w = (ph_stage + " + Ds + ") % " + S + ";");
  line("if (ph_kt < " + hi + ") {");
  ++ind_;
  override_[s.reg] = "ph_kt";
  for (auto& [r, d] : defs) async_fill(r, d->value, "ph_w");
  override_.erase(s.reg);
  close();
  line("ph_cp_async_commit();");
  close();
  wgmma_overlap_ = overlap;
  for (auto& x : s.body) {
    if (x.kind == Stmt::Def && defs.count(x.reg)) continue;
    emit(x);
  }
  wgmma_overlap_ = false;
  line("ph_stage = (ph_stage + 1) % " + S + ";");
  close();
  if (overlap) {
    line("tc::tile::wgmma_wait<0>();");
    for (auto& d : p_.dots)
      if (d.loop == &s) line("tc::tile::reg_fence(" + cname(k_, d.acc) + ");");
  }
  line("ph_cp_async_wait<0>();");
  close();
}

void CudaEmitter::for_loop(const Stmt& s) {
  if (p_.ws && &s == p_.ws_loop) return ws_loop(s);
  std::string v = cname(k_, s.reg);
  std::vector<const passes::DotSite*> piped;
  for (auto& d : p_.dots)
    if (d.loop == &s && d.pipelined) piped.push_back(&d);
  if (piped.empty()) {
    if (s.unroll > 1) line("#pragma unroll " + std::to_string(s.unroll));
    line("for (int " + v + " = " + elem(s.lo, "0", "0", "0") + "; " + v + " < " +
         elem(s.hi, "0", "0", "0") + "; " + v + " += " + elem(s.step, "0", "0", "0") + ") {");
    ++ind_;
    block(s.body);
    close();
    return;
  }
  // Pipeline (@pipeline): stage 0 is filled before the loop; each step prefetches the next
  // step's operands into registers, computes on the current stage, then writes the other
  // stage. One barrier per step: the next step reads what this one wrote, and nobody writes a
  // stage until every thread has left the step that read it.
  std::set<int> ops;
  std::map<int, const Stmt*> defs;
  for (auto* d : piped) ops.insert({d->a, d->b});
  for (auto& x : s.body)
    if (x.kind == Stmt::Def && ops.count(x.reg)) defs[x.reg] = &x;
  std::string lo = elem(s.lo, "0", "0", "0"), hi = elem(s.hi, "0", "0", "0"),
              st = elem(s.step, "0", "0", "0");
  if (p_.async_copy) return async_pipeline(s, defs, v, lo, hi, st);
  line("{");
  ++ind_;
  line("int ph_stage = 0;");
  line("if (" + lo + " < " + hi + ") {");
  ++ind_;
  override_[s.reg] = "(" + lo + ")";
  for (auto& [r, d] : defs) smem_fill(r, d->value, "0");
  override_.erase(s.reg);
  close();
  sync();
  if (s.unroll > 1) line("#pragma unroll " + std::to_string(s.unroll));
  line("for (int " + v + " = " + lo + "; " + v + " < " + hi + "; " + v + " += " + st + ") {");
  ++ind_;
  line("const int ph_next = " + v + " + " + st + ";");
  line("const bool ph_more = ph_next < " + hi + ";");
  std::map<int, std::string> pre;
  for (auto& [r, d] : defs) {
    const VType& t = k_.regs[r].type;
    int64_t V = std::max<int64_t>(1, vec_width(r, d->value));
    int64_t items = t.numel() / V, n = (items + k_.threads - 1) / k_.threads;
    std::string arr = fresh("pf");
    pre[r] = arr;
    line(std::string(V > 1 ? "uint4" : compute_type(t.dt)) + " " + arr + "[" + std::to_string(n) +
         "];");
    line("if (ph_more) {");
    ++ind_;
    override_[s.reg] = "ph_next";
    std::string jj = fresh("j");
    line("#pragma unroll");
    line("for (int " + jj + " = 0; " + jj + " < " + std::to_string(n) + "; ++" + jj + ") {");
    ++ind_;
    std::string e = fresh("e");
    line("const int " + e + " = tid + " + jj + " * " + std::to_string(k_.threads) + ";");
    int64_t w = t.shape.back() / V;
    line("const int r_ = " + e + " / " + std::to_string(w) + ", c_ = (" + e + " % " +
         std::to_string(w) + ") * " + std::to_string(V) + ";");
    if (V > 1) {
      line("if (" + e + " < " + std::to_string(items) + ")");
      vec_load(d->value, V, "r_", "c_", arr + "[" + jj + "]", false);
    } else {
      line(arr + "[" + jj + "] = " + e + " < " + std::to_string(items) + " ? " +
           elem(d->value, "r_", "c_", e) + " : 0;");
    }
    close();
    override_.erase(s.reg);
    close();
  }
  for (auto& x : s.body) {
    if (x.kind == Stmt::Def && defs.count(x.reg)) continue;
    emit(x);
  }
  line("if (ph_more) {");
  ++ind_;
  for (auto& [r, arr] : pre) {
    const VType& t = k_.regs[r].type;
    int64_t V = std::max<int64_t>(1, vec_width(r, defs.at(r)->value));
    int64_t items = t.numel() / V, n = (items + k_.threads - 1) / k_.threads;
    int64_t w = t.shape.back() / V;
    std::string T = std::to_string(k_.threads), W = std::to_string(w);
    line("#pragma unroll");
    line("for (int j = 0; j < " + std::to_string(n) + "; ++j) {");
    ++ind_;
    line("const int e_ = tid + j * " + T + ", r_ = e_ / " + W + ", c_ = (e_ % " + W + ") * " +
         std::to_string(V) + ";");
    line("(void)r_;");
    std::string at = smem_at(r, "(ph_stage ^ 1)", "r_", "c_", "e_");
    line("if (e_ < " + std::to_string(items) + ") " +
         (V > 1 ? "*reinterpret_cast<uint4*>(&" + at + ") = " + arr + "[j];"
                : at + " = " + store_cast(t.dt, arr + "[j]") + ";"));
    close();
  }
  close();
  sync();
  line("ph_stage ^= 1;");
  close();
  close();
}

}  // namespace phobos::cuda_emit
