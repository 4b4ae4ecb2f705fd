#include "npy.h"

#include <fstream>
#include <stdexcept>

namespace phobosc {

using phobos::DType;

static const char* descr(DType t) {
  switch (t) {
    case DType::F32:
      return "<f4";
    case DType::F16:
      return "<f2";
    case DType::I32:
      return "<i4";
    case DType::I8:
      return "|i1";
    case DType::Bool:
      return "|b1";
    case DType::BF16:
      break;
  }
  throw std::runtime_error("bf16 has no NumPy dtype; store it as f32");
}

Npy read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  char magic[8];
  in.read(magic, 8);
  if (!in || std::string(magic, 6) != "\x93NUMPY")
    throw std::runtime_error(path + ": not a .npy file (bad magic)");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    hlen = b[0] | (b[1] << 8);
  } else {
    unsigned char b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  }
  if (!in || hlen > 65536) throw std::runtime_error(path + ": bad header length");
  std::string h(hlen, '\0');
  in.read(h.data(), hlen);
  auto field = [&](const std::string& key) {
    size_t p = h.find("'" + key + "'");
    if (p == std::string::npos) throw std::runtime_error(path + ": header has no '" + key + "'");
    p = h.find(':', p);
    return h.substr(p + 1);
  };
  Npy a;
  std::string d = field("descr");
  size_t q = d.find('\'');
  std::string ds = d.substr(q + 1, d.find('\'', q + 1) - q - 1);
  if (ds == "<f4")
    a.dtype = DType::F32;
  else if (ds == "<f2")
    a.dtype = DType::F16;
  else if (ds == "<i4")
    a.dtype = DType::I32;
  else if (ds == "|i1")
    a.dtype = DType::I8;
  else if (ds == "|b1")
    a.dtype = DType::Bool;
  else
    throw std::runtime_error(path + ": unsupported dtype '" + ds + "'");
  if (field("fortran_order").find("True") < field("fortran_order").find(','))
    throw std::runtime_error(path + ": Fortran-ordered arrays are not supported");
  std::string s = field("shape");
  s = s.substr(s.find('(') + 1, s.find(')') - s.find('(') - 1);
  size_t n = 1;
  for (size_t p = 0; p < s.size();) {
    size_t e = s.find(',', p);
    std::string tok = s.substr(p, e == std::string::npos ? std::string::npos : e - p);
    if (tok.find_first_not_of(" ") != std::string::npos) {
      int64_t v = std::stoll(tok);
      a.shape.push_back(v);
      n *= static_cast<size_t>(v);
    }
    if (e == std::string::npos) break;
    p = e + 1;
  }
  a.data.resize(n * phobos::dtype_size(a.dtype));
  in.read(a.data.data(), static_cast<std::streamsize>(a.data.size()));
  if (!in) throw std::runtime_error(path + ": file is shorter than its shape says");
  return a;
}

void write_npy(const std::string& path, const Npy& a) {
  std::string shape = "(";
  for (auto s : a.shape) shape += std::to_string(s) + ",";
  if (a.shape.size() > 1) shape.pop_back();
  shape += ")";
  std::string h = std::string("{'descr': '") + descr(a.dtype) +
                  "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot write");
  out.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {static_cast<char>(h.size() & 0xff), static_cast<char>(h.size() >> 8)};
  out.write(len, 2);
  out << h;
  out.write(a.data.data(), static_cast<std::streamsize>(a.data.size()));
}

}  // namespace phobosc
