#include "core/knobs.h"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/debug.h"

namespace mccl {
namespace {

const KnobDef kKnobs[] = {
#define MCCL_KNOB_ROW(id, name, type, def, help) {name, KnobType::type, def, help},
    MCCL_KNOB_TABLE(MCCL_KNOB_ROW)
#undef MCCL_KNOB_ROW
};
static_assert(sizeof(kKnobs) / sizeof(kKnobs[0]) == static_cast<size_t>(Knob::Count),
              "knob table and enum disagree");

struct KnobValue {
  bool set = false;
  std::string raw;
  int64_t parsed = 0;
  std::string str;
};

class KnobStore {
 public:
  // Read on every call of the data path: after the first load, one acquire load and no
  // call into pthread_once.
  const KnobValue& get(Knob k) {
    if (!loaded_.load(std::memory_order_acquire)) {
      std::call_once(once_, [this] { load(); });
      loaded_.store(true, std::memory_order_release);
    }
    return values_[static_cast<int>(k)];
  }
  void reload() {
    std::call_once(once_, [] {});
    std::lock_guard<std::mutex> lock(mu_);
    load();
  }

 private:
  void load() {
    values_.assign(static_cast<size_t>(Knob::Count), KnobValue{});
    for (int i = 0; i < static_cast<int>(Knob::Count); ++i) {
      const KnobDef& d = kKnobs[i];
      KnobValue& v = values_[i];
      const char* env = std::getenv(d.name);  // the only getenv of the library
      v.set = env != nullptr;
      v.raw = env ? env : d.defaultValue;
      v.str = v.raw;
      if (d.type == KnobType::String) continue;
      if (!parse(d.type, v.raw.c_str(), &v.parsed)) {
        std::fprintf(stderr, "mccl WARN %s=\"%s\" is not a valid %s; using %s\n", d.name,
                     v.raw.c_str(),
                     d.type == KnobType::Bool ? "boolean" : "integer", d.defaultValue);
        parse(d.type, d.defaultValue, &v.parsed);
        v.str = d.defaultValue;
      }
    }
  }
  static bool parse(KnobType t, const char* s, int64_t* out) {
    bool b = false;
    switch (t) {
      case KnobType::Int:
        // A mode switch that was a boolean (MCCL_PDL) keeps its words: off is 0, on is 1.
        if (parseKnobInt(s, out)) return true;
        if (!parseKnobBool(s, &b)) return false;
        *out = b ? 1 : 0;
        return true;
      case KnobType::Size: return parseKnobSize(s, out);
      case KnobType::Bool:
        if (!parseKnobBool(s, &b)) return false;
        *out = b ? 1 : 0;
        return true;
      case KnobType::String: return true;
    }
    return false;
  }

  std::once_flag once_;
  std::atomic<bool> loaded_{false};
  std::mutex mu_;
  std::vector<KnobValue> values_;
};

KnobStore& store() {
  static KnobStore* s = new KnobStore();  // never destroyed: knobs are read at exit too
  return *s;
}

const char* skipBlanks(const char* s) {
  while (*s && std::isspace(static_cast<unsigned char>(*s))) ++s;
  return s;
}

bool onlyBlanks(const char* s) { return *skipBlanks(s) == '\0'; }

bool iequals(const std::string& a, const char* b) {
  size_t n = std::strlen(b);
  if (a.size() != n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

const KnobDef& knobDef(Knob k) { return kKnobs[static_cast<int>(k)]; }
int64_t knobInt(Knob k) { return store().get(k).parsed; }
bool knobBool(Knob k) { return store().get(k).parsed != 0; }
std::string knobStr(Knob k) { return store().get(k).str; }
bool knobIsSet(Knob k) { return store().get(k).set; }
bool knobForced(Knob k, bool* value) {
  const std::string mode = knobStr(k);
  if (mode == "auto") return false;
  if (parseKnobBool(mode.c_str(), value)) return true;
  WARN("%s=%s is not auto, 0 or 1: taken as auto", knobDef(k).name, mode.c_str());
  return false;
}
namespace {
std::atomic<uint64_t> gKnobsGeneration{0};
}
void knobsReload() {
  store().reload();
  gKnobsGeneration.fetch_add(1, std::memory_order_release);
}
uint64_t knobsGeneration() { return gKnobsGeneration.load(std::memory_order_acquire); }

std::string knobsHelp() {
  std::string out;
  char line[512];
  for (const KnobDef& d : kKnobs) {
    const char* type = d.type == KnobType::Int    ? "int"
                       : d.type == KnobType::Size ? "size"
                       : d.type == KnobType::Bool ? "bool"
                                                  : "string";
    std::snprintf(line, sizeof line, "%-24s %-6s default \"%s\"\n    %s\n", d.name, type,
                  d.defaultValue, d.help);
    out += line;
  }
  return out;
}

bool parseKnobInt(const char* s, int64_t* out) {
  if (s == nullptr) return false;
  s = skipBlanks(s);
  if (*s == '\0') return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 0);
  if (errno != 0 || end == s || !onlyBlanks(end)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

bool parseKnobSize(const char* s, int64_t* out) {
  if (s == nullptr) return false;
  s = skipBlanks(s);
  if (*s == '\0' || *s == '-') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 0);
  if (errno != 0 || end == s) return false;
  unsigned long long mult = 1;
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case 'K': mult = 1ull << 10; ++end; break;
    case 'M': mult = 1ull << 20; ++end; break;
    case 'G': mult = 1ull << 30; ++end; break;
    case 'T': mult = 1ull << 40; ++end; break;
    default: break;
  }
  if (mult != 1 && (*end == 'B' || *end == 'b')) ++end;
  if (!onlyBlanks(end)) return false;
  if (v > static_cast<unsigned long long>(INT64_MAX) / mult) return false;
  *out = static_cast<int64_t>(v * mult);
  return true;
}

bool parseKnobBool(const char* s, bool* out) {
  if (s == nullptr) return false;
  s = skipBlanks(s);
  std::string w;
  while (*s && !std::isspace(static_cast<unsigned char>(*s))) w.push_back(*s++);
  if (!onlyBlanks(s)) return false;
  for (const char* t : {"1", "true", "yes", "on", "y"})
    if (iequals(w, t)) return (*out = true), true;
  for (const char* f : {"0", "false", "no", "off", "n"})
    if (iequals(w, f)) return (*out = false), true;
  return false;
}

bool knobListAllows(const std::string& list, const char* item) {
  const char* p = list.c_str();
  p = skipBlanks(p);
  if (*p == '\0') return true;
  bool exclude = false;
  if (*p == '^') {
    exclude = true;
    ++p;
  }
  bool found = false;
  std::string tok;
  auto flush = [&] {
    while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.back()))) tok.pop_back();
    size_t b = 0;
    while (b < tok.size() && std::isspace(static_cast<unsigned char>(tok[b]))) ++b;
    tok = tok.substr(b);
    if (iequals(tok, item) || iequals(tok, "all")) found = true;
    tok.clear();
  };
  for (; *p; ++p) {
    if (*p == ',') flush();
    else tok.push_back(*p);
  }
  flush();
  return exclude ? !found : found;
}

}  // namespace mccl
