// Kernel::launch over tc buffers and streams. Built only where the tc library is available.
#include "phobos/cuda.h"
#include "phobos/phobos.h"
#include "tc/tc.h"

namespace phobos {

void Kernel::launch(std::span<const BufferArg> args, ::tc_stream* stream,
                    const LaunchOptions& opt) const {
  std::vector<Arg> views;
  bool any_device = false, any_host = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::holds_alternative<double>(args[i])) {
      views.emplace_back(std::get<double>(args[i]));
      continue;
    }
    const BufferView& b = std::get<BufferView>(args[i]);
    if (!b.buffer)
      throw Error("argument " + std::to_string(i) + " of '" + name_ + "' is a null tc buffer");
    size_t need = dtype_size(b.dtype);
    for (auto d : b.shape) need *= static_cast<size_t>(d > 0 ? d : 0);
    size_t have = tc_buffer_size(b.buffer);
    if (b.offset_bytes > have || need > have - b.offset_bytes)
      throw Error("argument " + std::to_string(i) + " of '" + name_ + "': the shape needs " +
                  std::to_string(need) + " bytes at offset " + std::to_string(b.offset_bytes) +
                  " but the buffer holds " + std::to_string(have));
    void* host = tc_buffer_data(b.buffer);
    void* ptr = host ? host : tc_buffer_device_ptr(b.buffer);
    (host ? any_host : any_device) = true;
    views.emplace_back(TensorView{static_cast<char*>(ptr) + b.offset_bytes, b.dtype, b.shape});
  }
  if (any_host && any_device)
    throw Error("'" + name_ + "' was given both host and device tc buffers; use one context");
  LaunchOptions o = opt;
  o.target = any_device ? Target::Cuda : Target::Cpu;
  // CUDA: queued on the stream's own cudaStream_t, in order after its work, asynchronously
  // (errors surface at the next tc_stream_sync or device synchronization). The CPU target and
  // a stream without a native queue wait for the stream and run synchronously.
  void* native = stream && o.target == Target::Cuda ? tc_stream_native_handle(stream) : nullptr;
  o.stream = native;
  if (stream && !native) {
    tc_status_t st = tc_stream_sync(stream);
    if (st != TC_SUCCESS) throw Error("tc_stream_sync failed before launching '" + name_ + "'");
  }
  launch(std::span<const Arg>(views), o);
  if (o.target == Target::Cuda && !native) cuda::synchronize();
}

}  // namespace phobos
