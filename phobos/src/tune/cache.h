// Where autotune winners are kept. A small interface so the library's own autotune cache can
// replace the default file later (one call to set_tune_cache).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace phobos {

struct TuneEntry {
  std::map<std::string, int64_t> params;
  double seconds = 0;
};

class TuneCache {
 public:
  virtual ~TuneCache() = default;
  virtual std::optional<TuneEntry> get(const std::string& key) = 0;
  virtual void put(const std::string& key, const TuneEntry& e) = 0;
};

// A JSON file {"version": 1, "entries": {key: {"params": {...}, "seconds": s}}}, rewritten
// atomically (temp file + rename) so concurrent processes never see half a file.
class FileTuneCache : public TuneCache {
 public:
  explicit FileTuneCache(std::string path) : path_(std::move(path)) {}
  std::optional<TuneEntry> get(const std::string& key) override;
  void put(const std::string& key, const TuneEntry& e) override;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::mutex mu_;
};

// PHOBOS_AUTOTUNE_CACHE, else ~/.cache/tc/phobos-autotune.json.
std::string default_tune_cache_path();
std::shared_ptr<TuneCache> tune_cache();
void set_tune_cache(std::shared_ptr<TuneCache> c);

}  // namespace phobos
