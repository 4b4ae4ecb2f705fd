// GGUF metadata value types and ggml tensor types with their block geometry.
#include "gguf/gguf.h"

namespace tc::gguf {
namespace {

// Sizes from ggml's block structs (ggml-common.h); retired ids (4, 5, 31-33, 36-38) and
// types newer than MXFP4 are left out, so files using them are rejected as unknown types.
constexpr TensorType kTypes[] = {
    {0, "F32", 1, 4},         {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},      {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 36},      {10, "Q2_K", 256, 84},
    {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},   {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66},
    {17, "IQ2_XS", 256, 74},  {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
    {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},
    {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},         {25, "I16", 1, 2},
    {26, "I32", 1, 4},        {27, "I64", 1, 8},        {28, "F64", 1, 8},
    {29, "IQ1_M", 256, 56},   {30, "BF16", 1, 2},       {34, "TQ1_0", 256, 54},
    {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17},
};

struct DtypeMap {
  tc_dtype_t dtype;
  uint32_t ggml;
};
constexpr DtypeMap kDtypes[] = {
    {TC_DTYPE_F32, 0},  {TC_DTYPE_F16, 1},   {TC_DTYPE_BF16, 30},
    {TC_DTYPE_I8, 24},  {TC_DTYPE_I32, 26},  {TC_DTYPE_Q4_0, 2},
    {TC_DTYPE_Q8_0, 8}, {TC_DTYPE_Q4_K, 12}, {TC_DTYPE_Q6_K, 14},
};

constexpr const char* kValueNames[kValueTypeCount] = {
    "UINT8", "INT8",   "UINT16", "INT16",  "UINT32", "INT32",  "FLOAT32",
    "BOOL",  "STRING", "ARRAY",  "UINT64", "INT64",  "FLOAT64"};
constexpr size_t kValueSizes[kValueTypeCount] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

}  // namespace

const char* value_type_name(uint32_t type) {
  return type < kValueTypeCount ? kValueNames[type] : "unknown";
}

size_t value_type_size(uint32_t type) {
  return type < kValueTypeCount ? kValueSizes[type] : 0;
}

const TensorType* tensor_type(uint32_t id) {
  for (const TensorType& t : kTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

uint32_t ggml_type_of(tc_dtype_t dtype) {
  for (const DtypeMap& m : kDtypes) {
    if (m.dtype == dtype) return m.ggml;
  }
  return UINT32_MAX;
}

int dtype_of_ggml_type(uint32_t id) {
  for (const DtypeMap& m : kDtypes) {
    if (m.ggml == id) return static_cast<int>(m.dtype);
  }
  return -1;
}

}  // namespace tc::gguf
