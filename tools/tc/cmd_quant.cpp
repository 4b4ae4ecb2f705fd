// `tc quant --to q4_0|q8_0|q4_k IN OUT`: quantizes with ggml's reference algorithms (bytes equal
// to ggml's). IN is a GGUF file (its F32/F16 matrices whose rows fit the block are quantized,
// everything else is copied, metadata included) or a raw little-endian f32/f16 file given with
// --shape ROWS,COLS (written as one tensor named --name).
#include <fmt/format.h>
#include <tc/tc.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "quant/fp16.h"

namespace {

struct Target {
  tc_dtype_t dtype;
  uint32_t ggml_type;
  uint32_t file_type;  // llama_ftype: MOSTLY_Q4_0 = 2, MOSTLY_Q8_0 = 7, MOSTLY_Q4_K_S = 14
  int block;
};

[[noreturn]] void die(const std::string& what) {
  fmt::print(stderr, "tc quant: {}\n", what);
  throw CLI::RuntimeError(1);
}

void check(tc_status_t st, const char* what) {
  if (st != TC_SUCCESS) die(fmt::format("{}: {}", what, tc_last_error_message()));
}

std::vector<float> to_f32(const void* data, uint32_t ggml_type, size_t n) {
  std::vector<float> out(n);
  if (ggml_type == 0) {
    std::memcpy(out.data(), data, n * 4);
  } else {
    const auto* h = static_cast<const uint16_t*>(data);
    for (size_t i = 0; i < n; ++i) out[i] = tc::quant::fp16_to_f32(h[i]);
  }
  return out;
}

struct Writer {
  tc_gguf_writer_t* w = nullptr;
  Writer() { check(tc_gguf_writer_create(&w), "writer"); }
  ~Writer() { tc_gguf_writer_destroy(w); }
};

void add_u32(tc_gguf_writer_t* w, const char* key, uint32_t v) {
  check(tc_gguf_writer_add_kv(w, key, TC_GGUF_UINT32, &v, 4), key);
}

void quantize_gguf(const Target& t, const std::string& in, const std::string& out) {
  tc_gguf_t* f = nullptr;
  check(tc_gguf_open(in.c_str(), &f), "reading input");
  std::unique_ptr<tc_gguf_t, tc_status_t (*)(tc_gguf_t*)> guard(f, tc_gguf_close);
  Writer w;
  int64_t n_kv = 0, n_t = 0;
  tc_gguf_kv_count(f, &n_kv);
  for (int64_t i = 0; i < n_kv; ++i) {
    const char* key;
    tc_gguf_kv_info(f, i, &key, nullptr, nullptr, nullptr);
    const std::string k = key;
    if (k == "general.file_type" || k == "general.quantization_version") continue;
    check(tc_gguf_writer_copy_kv(w.w, f, i), key);
  }
  add_u32(w.w, "general.quantization_version", 2);
  add_u32(w.w, "general.file_type", t.file_type);
  tc_gguf_tensor_count(f, &n_t);
  std::vector<std::vector<uint8_t>> keep;  // quantized bytes live until the write
  int quantized = 0;
  for (int64_t i = 0; i < n_t; ++i) {
    tc_gguf_tensor_desc d;
    const void* data;
    check(tc_gguf_tensor_info(f, i, &d), "tensor info");
    check(tc_gguf_tensor_data(f, i, &data), "tensor data");
    const bool convert = (d.ggml_type == 0 || d.ggml_type == 1) && d.n_dims >= 2 &&
                         d.ne[0] % t.block == 0 && d.ne[0] > 0;
    if (!convert) {
      check(tc_gguf_writer_add_tensor(w.w, d.name, d.ggml_type, d.n_dims, d.ne, data, d.nbytes),
            d.name);
      continue;
    }
    const int64_t rows = d.ne[1] * d.ne[2] * d.ne[3];
    const std::vector<float> x = to_f32(data, d.ggml_type, size_t(rows) * d.ne[0]);
    keep.emplace_back(tc_quant_row_bytes(t.dtype, d.ne[0]) * rows);
    check(tc_quantize(t.dtype, x.data(), rows, d.ne[0], keep.back().data(), keep.back().size()),
          d.name);
    check(tc_gguf_writer_add_tensor(w.w, d.name, t.ggml_type, d.n_dims, d.ne, keep.back().data(),
                                    keep.back().size()),
          d.name);
    ++quantized;
  }
  check(tc_gguf_writer_write(w.w, out.c_str()), "writing output");
  fmt::print("{}: {} of {} tensors quantized\n", out, quantized, n_t);
}

void quantize_raw(const Target& t, const std::string& in, const std::string& out,
                  const std::vector<int64_t>& shape, const std::string& dtype,
                  const std::string& name) {
  if (shape.size() != 2 || shape[0] <= 0 || shape[1] <= 0) die("--shape must be ROWS,COLS");
  if (shape[1] % t.block != 0) {
    die(fmt::format("--shape columns = {} is not a multiple of the block size {}", shape[1],
                    t.block));
  }
  std::ifstream fin(in, std::ios::binary);
  if (!fin) die(fmt::format("cannot open '{}'", in));
  const std::vector<char> raw{std::istreambuf_iterator<char>(fin),
                              std::istreambuf_iterator<char>()};
  const size_t n = size_t(shape[0]) * shape[1];
  const uint32_t type = dtype == "f16" ? 1 : 0;
  const size_t need = n * (type == 1 ? 2 : 4);
  if (raw.size() != need) {
    die(fmt::format("'{}' has {} bytes; {} x {} {} needs {}", in, raw.size(), shape[0], shape[1],
                    dtype, need));
  }
  const std::vector<float> x = to_f32(raw.data(), type, n);
  std::vector<uint8_t> q(tc_quant_row_bytes(t.dtype, shape[1]) * shape[0]);
  check(tc_quantize(t.dtype, x.data(), shape[0], shape[1], q.data(), q.size()), "quantize");
  Writer w;
  check(tc_gguf_writer_add_kv(w.w, "general.architecture", TC_GGUF_STRING, "tc", 2), "arch");
  add_u32(w.w, "general.quantization_version", 2);
  add_u32(w.w, "general.file_type", t.file_type);
  const int64_t ne[2] = {shape[1], shape[0]};
  check(tc_gguf_writer_add_tensor(w.w, name.c_str(), t.ggml_type, 2, ne, q.data(), q.size()),
        "tensor");
  check(tc_gguf_writer_write(w.w, out.c_str()), "writing output");
  fmt::print("{}: tensor '{}' [{} x {}] {} bytes\n", out, name, shape[0], shape[1], q.size());
}

}  // namespace

void tc_cli_add_quant(CLI::App& app) {
  auto* cmd = app.add_subcommand("quant", "Quantize a GGUF file or a raw f32/f16 matrix");
  struct Opts {
    std::string to, in, out, dtype = "f32", name = "weight";
    std::vector<int64_t> shape;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--to", o->to, "target format")
      ->required()
      ->check(CLI::IsMember({"q4_0", "q8_0", "q4_k"}));
  cmd->add_option("IN", o->in, "GGUF file, or raw matrix with --shape")->required();
  cmd->add_option("OUT", o->out, "GGUF file to write")->required();
  cmd->add_option("--shape", o->shape, "raw input: ROWS,COLS (row-major)")->delimiter(',');
  cmd->add_option("--dtype", o->dtype, "raw input element type")
      ->check(CLI::IsMember({"f32", "f16"}));
  cmd->add_option("--name", o->name, "raw input: tensor name");
  cmd->callback([o] {
    const Target t = o->to == "q4_0"   ? Target{TC_DTYPE_Q4_0, 2, 2, 32}
                     : o->to == "q8_0" ? Target{TC_DTYPE_Q8_0, 8, 7, 32}
                                       : Target{TC_DTYPE_Q4_K, 12, 14, 256};
    if (o->shape.empty()) {
      quantize_gguf(t, o->in, o->out);
    } else {
      quantize_raw(t, o->in, o->out, o->shape, o->dtype, o->name);
    }
  });
}
