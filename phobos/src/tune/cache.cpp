#include "cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace phobos {

using nlohmann::json;

static json read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return json::object();
  std::stringstream ss;
  ss << in.rdbuf();
  // A corrupt cache is ignored (and rewritten on the next put), never fatal.
  json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("entries") || !j["entries"].is_object())
    return json::object();
  return j;
}

std::optional<TuneEntry> FileTuneCache::get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  json j = read_file(path_);
  if (!j.contains("entries") || !j["entries"].contains(key)) return std::nullopt;
  const json& e = j["entries"][key];
  if (!e.is_object() || !e.contains("params") || !e["params"].is_object()) return std::nullopt;
  TuneEntry out;
  for (auto& [n, v] : e["params"].items()) {
    if (!v.is_number_integer()) return std::nullopt;
    out.params[n] = v.get<int64_t>();
  }
  if (e.contains("seconds") && e["seconds"].is_number()) out.seconds = e["seconds"].get<double>();
  return out;
}

void FileTuneCache::put(const std::string& key, const TuneEntry& e) {
  std::lock_guard<std::mutex> lock(mu_);
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path_);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  json j = read_file(path_);
  j["version"] = 1;
  if (!j.contains("entries")) j["entries"] = json::object();
  json params = json::object();
  for (auto& [n, v] : e.params) params[n] = v;
  j["entries"][key] = {{"params", params}, {"seconds", e.seconds}};
  std::string tmp = path_ + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return;  // an unwritable cache only costs re-tuning
    out << j.dump(2) << "\n";
    if (!out) return;
  }
  fs::rename(tmp, p, ec);
  if (ec) fs::remove(tmp, ec);
}

std::string default_tune_cache_path() {
  if (const char* e = std::getenv("PHOBOS_AUTOTUNE_CACHE"); e && *e) return e;
  const char* home = std::getenv("HOME");
  std::string base = home && *home ? std::string(home) + "/.cache" : "/tmp";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) base = x;
  return base + "/tc/phobos-autotune.json";
}

static std::mutex g_mu;
static std::shared_ptr<TuneCache> g_cache;

std::shared_ptr<TuneCache> tune_cache() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_cache) g_cache = std::make_shared<FileTuneCache>(default_tune_cache_path());
  return g_cache;
}

void set_tune_cache(std::shared_ptr<TuneCache> c) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_cache = std::move(c);
}

}  // namespace phobos
