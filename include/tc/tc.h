/* tc — tensor compute. The C API: contexts, buffers, streams, GEMM, and the ops built on them.
 *
 * Every function returns a tc_status_t; on failure tc_last_error_message() (thread-local)
 * names the bad argument and its value in one sentence, and nothing was written.
 * Layout is BLAS row-major: C[M,N] = alpha * op(A)[M,K] @ op(B)[K,N] + beta * C[M,N].
 */
#ifndef TC_TC_H
#define TC_TC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TC_API
#else
#define TC_API __attribute__((visibility("default")))
#endif

#define TC_VERSION_MAJOR 0
#define TC_VERSION_MINOR 1
#define TC_VERSION_PATCH 0

/* ---- status ---------------------------------------------------------------------------- */
typedef enum {
  TC_SUCCESS = 0,
  TC_ERROR_NULL_POINTER = 1,      /* a required pointer argument is NULL */
  TC_ERROR_INVALID_VALUE = 2,     /* an enum or flag outside its domain */
  TC_ERROR_INVALID_SHAPE = 3,     /* M, N, K, batch <= 0 or beyond 32-bit indexing */
  TC_ERROR_INVALID_LD = 4,        /* a leading dimension smaller than the row length */
  TC_ERROR_BUFFER_TOO_SMALL = 5,  /* the descriptor reaches past the end of a buffer */
  TC_ERROR_UNSUPPORTED_DTYPE = 6, /* a dtype combination no backend implements */
  TC_ERROR_CONTEXT_MISMATCH = 7,  /* a buffer or stream of another context */
  TC_ERROR_OVERLAP = 8,           /* batched outputs overlap each other */
  TC_ERROR_OUT_OF_RANGE = 9,      /* offset + bytes beyond a buffer */
  TC_ERROR_OUT_OF_MEMORY = 10,    /* an allocation failed */
  TC_ERROR_NO_DEVICE = 11,        /* the requested device kind is not present */
  TC_ERROR_NOT_SUPPORTED = 12,    /* valid request that no dispatch row can serve */
  TC_ERROR_BACKEND_FAILURE = 13,  /* the backend (CUDA, BLAS) reported an error */
  TC_ERROR_IO = 14,               /* a file could not be opened, read or written */
  TC_ERROR_INVALID_FORMAT = 15,   /* malformed file contents (GGUF, .ph) */
  TC_ERROR_INTERNAL = 16,         /* a bug in tc */
  TC_STATUS_MAX_ENUM = 0x7fffffff /* any int is a valid value: callers may pass garbage */
} tc_status_t;

TC_API const char* tc_status_string(tc_status_t status);
/* The message of the last failing call on this thread ("" when none). */
TC_API const char* tc_last_error_message(void);
TC_API const char* tc_version_string(void);

/* ---- dtypes ----------------------------------------------------------------------------- */
typedef enum {
  TC_DTYPE_F32 = 0,
  TC_DTYPE_F16 = 1,
  TC_DTYPE_BF16 = 2,
  TC_DTYPE_I8 = 3,
  TC_DTYPE_I32 = 4,
  /* accum_dtype only: f32 inputs may be rounded to TF32 on tensor cores. */
  TC_DTYPE_TF32 = 5,
  /* Quantized weight formats (GGUF block layouts; see docs/quant.md). */
  TC_DTYPE_Q4_0 = 16,
  TC_DTYPE_Q8_0 = 17,
  TC_DTYPE_Q4_K = 18,
  TC_DTYPE_Q6_K = 19,
  TC_DTYPE_MAX_ENUM = 0x7fffffff
} tc_dtype_t;

TC_API const char* tc_dtype_name(tc_dtype_t dtype);
/* Bytes per element; 0 for block-quantized formats and invalid values. */
TC_API size_t tc_dtype_size(tc_dtype_t dtype);

/* ---- devices and contexts --------------------------------------------------------------- */
typedef enum {
  TC_DEVICE_AUTO = 0,
  TC_DEVICE_CPU = 1,
  TC_DEVICE_CUDA = 2,
  TC_DEVICE_MAX_ENUM = 0x7fffffff
} tc_device_t;

typedef enum {
  TC_BACKEND_NONE = 0,
  TC_BACKEND_CPU = 1,      /* tc's own CPU kernels */
  TC_BACKEND_OPENBLAS = 2, /* OpenBLAS (CPU float GEMM) */
  TC_BACKEND_CUDA = 3,     /* tc's own CUDA kernels */
  TC_BACKEND_CUBLASLT = 4, /* cuBLASLt on the CUDA device */
  TC_BACKEND_MAX_ENUM = 0x7fffffff
} tc_backend_t;

typedef struct tc_context tc_context_t;
typedef struct tc_buffer tc_buffer_t;
typedef struct tc_stream tc_stream_t;

typedef struct {
  tc_device_t device;
  char name[128];             /* "AMD EPYC ..." or "NVIDIA H200" */
  int32_t compute_units;      /* CPU threads or CUDA multiprocessors */
  int32_t cc_major, cc_minor; /* CUDA compute capability; 0 on the CPU */
  uint64_t memory_bytes;      /* device memory (host RAM on the CPU) */
  uint64_t l2_bytes;          /* last-level cache size where known, else 0 */
  uint32_t cpu_features;      /* TC_CPU_* bits */
} tc_device_info;

enum {
  TC_CPU_AVX2 = 1u << 0,
  TC_CPU_FMA = 1u << 1,
  TC_CPU_F16C = 1u << 2,
  TC_CPU_AVX512F = 1u << 3,
  TC_CPU_AVX512BW = 1u << 4,
  TC_CPU_AVX512VNNI = 1u << 5,
  TC_CPU_AVXVNNI = 1u << 6,
  TC_CPU_AVX512BF16 = 1u << 7
};

/* TC_DEVICE_AUTO picks CUDA when a device is usable, else the CPU. TC_BACKEND=cpu|cuda in the
 * environment forces the choice for AUTO. */
TC_API tc_status_t tc_context_create(tc_context_t** ctx, tc_device_t device);
TC_API tc_status_t tc_context_destroy(tc_context_t* ctx);
TC_API tc_status_t tc_context_device_info(const tc_context_t* ctx, tc_device_info* info);
/* Returns cached device memory that no live buffer uses to the driver. */
TC_API tc_status_t tc_context_trim(tc_context_t* ctx);
/* Device memory of this context's allocator: bytes in live buffers, bytes held (live plus
 * cached), and the peak held since creation or the last tc_context_trim (which resets it). */
TC_API tc_status_t tc_context_memory_stats(const tc_context_t* ctx, uint64_t* live_bytes,
                                           uint64_t* held_bytes, uint64_t* peak_bytes);
/* Is a device kind present and usable in this process (without creating a context)? */
TC_API bool tc_device_available(tc_device_t device);

/* ---- buffers ---------------------------------------------------------------------------- */
TC_API tc_status_t tc_buffer_alloc(tc_context_t* ctx, size_t bytes, tc_buffer_t** buf);
/* Host memory: zero-copy on a CPU context when ptr is 64-byte aligned (the caller keeps it alive
 * and owns it), else a copy. On a CUDA context always a device copy. */
TC_API tc_status_t tc_buffer_from_ptr(tc_context_t* ctx, void* ptr, size_t bytes,
                                      tc_buffer_t** buf);
/* A foreign pointer of the context's device (a CUDA device pointer, or host memory on the CPU);
 * never copied, never freed by tc. */
TC_API tc_status_t tc_buffer_wrap(tc_context_t* ctx, void* device_ptr, size_t bytes,
                                  tc_buffer_t** buf);
TC_API tc_status_t tc_buffer_write(tc_buffer_t* buf, size_t offset, const void* src, size_t bytes);
TC_API tc_status_t tc_buffer_read(const tc_buffer_t* buf, size_t offset, void* dst, size_t bytes);
/* Host pointer where the memory is host-visible, else NULL. */
TC_API void* tc_buffer_data(tc_buffer_t* buf);
/* The device pointer (equal to tc_buffer_data on the CPU). */
TC_API void* tc_buffer_device_ptr(tc_buffer_t* buf);
TC_API size_t tc_buffer_size(const tc_buffer_t* buf);
TC_API tc_status_t tc_buffer_free(tc_buffer_t* buf);

/* ---- streams ---------------------------------------------------------------------------- */
/* Work queued on a stream runs asynchronously and in order. Errors raised by queued work are
 * returned by the next tc_stream_sync. */
TC_API tc_status_t tc_stream_create(tc_context_t* ctx, tc_stream_t** stream);
TC_API tc_status_t tc_stream_sync(tc_stream_t* stream);
TC_API tc_status_t tc_stream_destroy(tc_stream_t* stream);
/* The backend's own queue behind a stream (a cudaStream_t on CUDA), for launching foreign
 * kernels in stream order; NULL on the CPU. */
TC_API void* tc_stream_native_handle(tc_stream_t* stream);
/* Queues a host function after the work already on the stream (like cudaLaunchHostFunc); a
 * status other than TC_SUCCESS that it returns is reported by the next tc_stream_sync. */
typedef tc_status_t (*tc_host_fn)(void* user_data);
TC_API tc_status_t tc_stream_enqueue_host(tc_stream_t* stream, tc_host_fn fn, void* user_data);

/* ---- GEMM ------------------------------------------------------------------------------- */
typedef struct {
  int32_t M, N, K;
  tc_dtype_t a_dtype, b_dtype, c_dtype, accum_dtype;
  bool transpose_a, transpose_b;
  float alpha, beta;
  int32_t lda, ldb, ldc; /* 0 = contiguous row-major */
} tc_gemm_desc;

typedef struct {
  tc_gemm_desc base;
  int32_t batch;
  int64_t stride_a, stride_b, stride_c; /* elements; 0 broadcasts A or B */
} tc_gemm_batched_desc;

/* Supported: (F32,F32)->F32 accum F32 or TF32; (F16,F16)->F16|F32 accum F32;
 * (BF16,BF16)->BF16|F32 accum F32; (I8,I8)->I32 accum I32 (alpha = 1, beta in {0, 1}). */
TC_API tc_status_t tc_gemm(tc_context_t* ctx, const tc_gemm_desc* desc, tc_buffer_t* A,
                           tc_buffer_t* B, tc_buffer_t* C);
TC_API tc_status_t tc_gemm_async(tc_context_t* ctx, const tc_gemm_desc* desc, tc_buffer_t* A,
                                 tc_buffer_t* B, tc_buffer_t* C, tc_stream_t* stream);
TC_API tc_status_t tc_gemm_batched(tc_context_t* ctx, const tc_gemm_batched_desc* desc,
                                   tc_buffer_t* A, tc_buffer_t* B, tc_buffer_t* C);
TC_API tc_status_t tc_gemm_batched_async(tc_context_t* ctx, const tc_gemm_batched_desc* desc,
                                         tc_buffer_t* A, tc_buffer_t* B, tc_buffer_t* C,
                                         tc_stream_t* stream);

/* What served the last successful op on this thread. */
TC_API tc_backend_t tc_last_backend(void);
/* The dispatch row (kernel instance) that served it, e.g. "gemm_openblas_sgemm". */
TC_API const char* tc_last_instance(void);
TC_API const char* tc_backend_name(tc_backend_t backend);

/* ---- quantized (docs/quant.md) ---------------------------------------------------------- */
/* Declarations for the quantized kernels and GGUF files are added below this line. */

/* C++: fields added to a descriptor after its first release default to 0, so braced
 * initializers written before they existed stay complete. */
#ifdef __cplusplus
#define TC_QUANT_DESC_ZERO = 0
#else
#define TC_QUANT_DESC_ZERO
#endif

/* Weights W[N,K] are N rows of K values, stored as GGUF stores them: each row is K/block
 * consecutive blocks (block = 32 for Q4_0/Q8_0, 256 for Q4_K/Q6_K), rows back to back. For
 * TC_DTYPE_I8 weights W holds N*K int8 and w_scales N floats: W[n,k] = w_scales[n] * Wq[n,k].
 * X is [M,K] and Y [M,N], row-major and contiguous: Y = X * dequant(W)^T. (Tagged: C++ allows a
 * default member initializer only in a named struct.) */
typedef struct tc_quant_matmul_desc {
  int32_t M, N, K;
  tc_dtype_t w_dtype; /* Q4_0, Q8_0, Q4_K, Q6_K or I8 */
  tc_dtype_t x_dtype; /* F32, F16 or BF16 (half X read as it is by the CUDA bulk GEMV and
                       * batched-decode MMA kernels, else widened to f32 first); Q8_0 (X given as
                       * M rows of K/32 GGUF block_q8_0, as an RMSNorm that quantizes its output
                       * would write it; K % 32 == 0; the same rows as f32 X serve it: with
                       * quantize_activations the CUDA bulk GEMV (M <= 2) dots its codes as they
                       * are, every other row runs on X dequantized to f32); or I8 (with I8
                       * weights only; X = x_scale * Xq) */
  tc_dtype_t y_dtype; /* F32 */
  /* Allow kernels to quantize f32 activations to 8 bits on the fly (faster; rms_scaled error
   * <= 5e-3 instead of <= 1e-4 against float64 of the dequantized weights). */
  bool quantize_activations;
  float x_scale; /* x_dtype = I8 only */
  /* TC_QUANT_* bits below; 0 for none. A bit that no flag defines is refused
   * (TC_ERROR_INVALID_VALUE). Zero it in C (memset or = {0}); in C++ a braced initializer that
   * stops before it leaves it 0. */
  uint32_t flags TC_QUANT_DESC_ZERO;
} tc_quant_matmul_desc;

/* tc_quant_matmul_desc.flags. */
enum {
  /* The caller promises that W (and w_scales) is not written by any work queued before the call
   * on its stream that may still be running: the weights are constant while the call is queued,
   * as when they are loaded once before a decode loop. On CUDA the kernels may then start, and
   * stream W, while the previous kernel on the stream is still running (programmatic dependent
   * launch); X and Y are still read and written in stream order. Same results, bit for bit,
   * with or without it; breaking the promise is a data race on W. */
  TC_QUANT_WEIGHTS_CONSTANT = 1u << 0
};

/* Decode GEMV (M <= 8 runs the fused dequant+dot kernels; larger M is served like GEMM).
 * w_scales is required for I8 weights and must be NULL otherwise. TC_Q4_USE_V1=1 in the
 * environment selects the simple v1 kernel. */
TC_API tc_status_t tc_gemv_quantized(tc_context_t* ctx, const tc_quant_matmul_desc* desc,
                                     tc_buffer_t* W, tc_buffer_t* w_scales, tc_buffer_t* X,
                                     tc_buffer_t* Y);
/* GEMM over quantized weights (M > 8: dequantized panels and an f32 GEMM). Same table. */
TC_API tc_status_t tc_gemm_quantized(tc_context_t* ctx, const tc_quant_matmul_desc* desc,
                                     tc_buffer_t* W, tc_buffer_t* w_scales, tc_buffer_t* X,
                                     tc_buffer_t* Y);

/* The same, queued on `stream` in order with its other work (a decode step's GEMVs then run
 * back to back without a host wait each): nothing is written when an argument is refused, and
 * a failure of the queued work is reported by the next tc_stream_sync. The buffers must stay
 * alive until the stream has run it. */
TC_API tc_status_t tc_gemv_quantized_async(tc_context_t* ctx, const tc_quant_matmul_desc* desc,
                                           tc_buffer_t* W, tc_buffer_t* w_scales, tc_buffer_t* X,
                                           tc_buffer_t* Y, tc_stream_t* stream);
TC_API tc_status_t tc_gemm_quantized_async(tc_context_t* ctx, const tc_quant_matmul_desc* desc,
                                           tc_buffer_t* W, tc_buffer_t* w_scales, tc_buffer_t* X,
                                           tc_buffer_t* Y, tc_stream_t* stream);

/* Bytes of one row of k values in a block format; 0 when k is not a multiple of the block or
 * the dtype is not block-quantized. */
TC_API size_t tc_quant_row_bytes(tc_dtype_t format, int64_t k);
/* Host memory. x[rows,k] f32 -> y (rows * tc_quant_row_bytes bytes), with ggml's reference
 * algorithms (byte-identical to ggml's quantizer without imatrix). format: Q4_0, Q8_0, Q4_K. */
TC_API tc_status_t tc_quantize(tc_dtype_t format, const float* x, int64_t rows, int64_t k, void* y,
                               size_t y_bytes);
/* Host memory. format: Q4_0, Q8_0, Q4_K, Q6_K. */
TC_API tc_status_t tc_dequantize(tc_dtype_t format, const void* x, size_t x_bytes, int64_t rows,
                                 int64_t k, float* y);

/* ---- GGUF v3 files (docs/quant.md) ------------------------------------------------------ */
typedef struct tc_gguf tc_gguf_t;
typedef struct tc_gguf_writer tc_gguf_writer_t;

typedef enum {
  TC_GGUF_UINT8 = 0,
  TC_GGUF_INT8 = 1,
  TC_GGUF_UINT16 = 2,
  TC_GGUF_INT16 = 3,
  TC_GGUF_UINT32 = 4,
  TC_GGUF_INT32 = 5,
  TC_GGUF_FLOAT32 = 6,
  TC_GGUF_BOOL = 7,
  TC_GGUF_STRING = 8,
  TC_GGUF_ARRAY = 9,
  TC_GGUF_UINT64 = 10,
  TC_GGUF_INT64 = 11,
  TC_GGUF_FLOAT64 = 12
} tc_gguf_type_t;

typedef struct {
  const char* name; /* valid until tc_gguf_close */
  int32_t n_dims;
  int64_t ne[4];         /* ne[0] is the row length (contiguous); unused dims are 1 */
  uint32_t ggml_type;    /* the GGUF type id (2 = Q4_0, 8 = Q8_0, 12 = Q4_K, ...) */
  const char* type_name; /* "Q4_K" */
  int32_t dtype;         /* the tc_dtype_t of ggml_type, or -1 when tc has none */
  uint64_t file_offset;  /* absolute byte offset of the data in the file */
  uint64_t nbytes;
} tc_gguf_tensor_desc;

/* Maps the file and validates all of it; a malformed file fails with TC_ERROR_INVALID_FORMAT
 * and a message naming the problem and its byte offset. */
TC_API tc_status_t tc_gguf_open(const char* path, tc_gguf_t** file);
TC_API tc_status_t tc_gguf_close(tc_gguf_t* file);
TC_API tc_status_t tc_gguf_version(const tc_gguf_t* file, uint32_t* version);
TC_API tc_status_t tc_gguf_tensor_count(const tc_gguf_t* file, int64_t* count);
TC_API tc_status_t tc_gguf_tensor_info(const tc_gguf_t* file, int64_t index,
                                       tc_gguf_tensor_desc* info);
TC_API tc_status_t tc_gguf_find_tensor(const tc_gguf_t* file, const char* name, int64_t* index);
/* The tensor's bytes inside the mapping (no copy); valid until tc_gguf_close. */
TC_API tc_status_t tc_gguf_tensor_data(const tc_gguf_t* file, int64_t index, const void** data);
/* Copies the tensor's bytes into dst at dst_offset. */
TC_API tc_status_t tc_gguf_read_tensor(const tc_gguf_t* file, int64_t index, tc_buffer_t* dst,
                                       size_t dst_offset);
TC_API tc_status_t tc_gguf_kv_count(const tc_gguf_t* file, int64_t* count);
TC_API tc_status_t tc_gguf_find_key(const tc_gguf_t* file, const char* key, int64_t* index);
/* key: NUL-terminated, valid until close. elem_type and count describe arrays (count = 1 and
 * elem_type = type for scalars). Any output pointer may be NULL. */
TC_API tc_status_t tc_gguf_kv_info(const tc_gguf_t* file, int64_t index, const char** key,
                                   tc_gguf_type_t* type, tc_gguf_type_t* elem_type,
                                   uint64_t* count);
/* Scalars: integers and BOOL as int64 (UINT64 above INT64_MAX fails), floats as double. */
TC_API tc_status_t tc_gguf_get_int(const tc_gguf_t* file, int64_t index, int64_t* value);
TC_API tc_status_t tc_gguf_get_float(const tc_gguf_t* file, int64_t index, double* value);
/* STRING value, or element i of a STRING array (i ignored for scalars); not NUL-terminated. */
TC_API tc_status_t tc_gguf_get_string(const tc_gguf_t* file, int64_t index, uint64_t i,
                                      const char** data, size_t* length);
/* Packed little-endian elements of a numeric or BOOL array, inside the mapping. */
TC_API tc_status_t tc_gguf_get_array_data(const tc_gguf_t* file, int64_t index, const void** data);

/* Writes files ggml's strict reader accepts: tensors in the order added, contiguous offsets,
 * each aligned to general.alignment (default 32). Tensor data is referenced, not copied, so it
 * must stay valid until tc_gguf_writer_write returns. */
TC_API tc_status_t tc_gguf_writer_create(tc_gguf_writer_t** writer);
TC_API tc_status_t tc_gguf_writer_destroy(tc_gguf_writer_t* writer);
/* One scalar of a fixed-size type (value points to its bytes) or a STRING (value = the bytes,
 * size = their count). general.alignment must be a UINT32 power of two. */
TC_API tc_status_t tc_gguf_writer_add_kv(tc_gguf_writer_t* writer, const char* key,
                                         tc_gguf_type_t type, const void* value, size_t size);
/* Copies entry `index` of an open file (any type, arrays included). */
TC_API tc_status_t tc_gguf_writer_copy_kv(tc_gguf_writer_t* writer, const tc_gguf_t* file,
                                          int64_t index);
TC_API tc_status_t tc_gguf_writer_add_tensor(tc_gguf_writer_t* writer, const char* name,
                                             uint32_t ggml_type, int32_t n_dims, const int64_t* ne,
                                             const void* data, size_t nbytes);
TC_API tc_status_t tc_gguf_writer_write(tc_gguf_writer_t* writer, const char* path);

#ifdef __cplusplus
}
#endif

#endif /* TC_TC_H */
