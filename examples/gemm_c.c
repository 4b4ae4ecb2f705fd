/* The README's C example: C = A @ B in f32 on the best device, then read C back. */
#include <stdio.h>
#include <tc/tc.h>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    tc_status_t s_ = (call);                                                           \
    if (s_ != TC_SUCCESS) {                                                            \
      fprintf(stderr, "%s: %s: %s\n", #call, tc_status_string(s_), tc_last_error_message()); \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

int main(void) {
  enum { M = 3, N = 2, K = 4 };
  float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)(i % 5) - 2.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)(i % 3) - 1.0f;

  tc_context_t* ctx;
  CHECK(tc_context_create(&ctx, TC_DEVICE_AUTO));
  tc_buffer_t *A, *B, *C;
  CHECK(tc_buffer_alloc(ctx, sizeof a, &A));
  CHECK(tc_buffer_alloc(ctx, sizeof b, &B));
  CHECK(tc_buffer_alloc(ctx, sizeof c, &C));
  CHECK(tc_buffer_write(A, 0, a, sizeof a));
  CHECK(tc_buffer_write(B, 0, b, sizeof b));

  tc_gemm_desc d = {.M = M, .N = N, .K = K,
                    .a_dtype = TC_DTYPE_F32, .b_dtype = TC_DTYPE_F32,
                    .c_dtype = TC_DTYPE_F32, .accum_dtype = TC_DTYPE_F32,
                    .alpha = 1.0f, .beta = 0.0f};
  CHECK(tc_gemm(ctx, &d, A, B, C));
  CHECK(tc_buffer_read(C, 0, c, sizeof c));
  printf("ran on %s (%s)\n", tc_backend_name(tc_last_backend()), tc_last_instance());

  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float want = 0;
      for (int k = 0; k < K; ++k) want += a[i * K + k] * b[k * N + j];
      if (c[i * N + j] != want) bad = 1;
    }
  tc_buffer_free(A), tc_buffer_free(B), tc_buffer_free(C);
  tc_context_destroy(ctx);
  printf("%s\n", bad ? "MISMATCH" : "ok");
  return bad;
}
