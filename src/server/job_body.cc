// Parsing and printing the JSON bodies of the HTTP API.
#include "server/job_body.h"

#include <initializer_list>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "ax/duration.h"
#include "ax/instant.h"
#include "ax/schedule.h"

#include "server/url.h"

namespace ax::server {
namespace {

using nlohmann::json;

// Sets `out` to the value whose engine name (e.g. OverlapName) is `text`.
template <class E>
bool ByName(std::string_view text, std::initializer_list<E> values, std::string_view (*name)(E),
            E& out) {
  for (E e : values) {
    if (name(e) == text) {
      out = e;
      return true;
    }
  }
  return false;
}

Status Bad(std::string_view path, std::string_view why) {
  return Status::InvalidArgument(std::string(path) + ": " + std::string(why));
}

// Refuses keys of `obj` not in `allowed`.
Status OnlyKeys(const json& obj, std::string_view path,
                std::initializer_list<std::string_view> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (auto a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string p = path.empty() ? it.key() : std::string(path) + "." + it.key();
      return Bad(p, "unknown field");
    }
  }
  return Status();
}

Result<std::string> GetString(const json& v, std::string_view path) {
  if (!v.is_string()) return Bad(path, "must be a string");
  return v.get<std::string>();
}

Result<Duration> GetDuration(const json& v, std::string_view path) {
  auto s = GetString(v, path);
  if (!s.ok()) return s.status();
  auto d = ParseDuration(*s);
  if (!d.ok()) return Bad(path, d.status().message());
  return *d;
}

Result<int64_t> GetInt(const json& v, std::string_view path, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return Bad(path, "must be an integer");
  int64_t n = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                  ? INT64_MAX
                  : v.get<int64_t>();
  if (n < lo || n > hi) {
    return Bad(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  }
  return n;
}

Status ParseSchedule(const json& v, const std::string& p, DurableJob& j) {
  if (!v.is_object()) return Bad(p, "must be an object with one of cron, in, at, every");
  AX_RETURN_IF_ERROR(OnlyKeys(v, p, {"cron", "tz", "in", "at", "every"}));
  ScheduleFields f;
  for (auto [name, slot] :
       {std::pair{"cron", &f.cron}, std::pair{"tz", &f.tz}, std::pair{"in", &f.in},
        std::pair{"at", &f.at}, std::pair{"every", &f.every}}) {
    if (!v.contains(name)) continue;
    auto s = GetString(v.at(name), p + "." + name);
    if (!s.ok()) return s.status();
    *slot = *s;
  }
  auto spec = MakeScheduleSpec(f);
  if (!spec.ok()) {
    const std::string m = spec.status().message();
    // Name the field: messages start with "schedule:", "<field>:" or a cron reason.
    if (m.rfind("schedule:", 0) == 0) return Bad(p, m.substr(10));
    for (const char* k : {"in", "at", "every", "tz"}) {
      std::string pre = std::string(k) + ":";
      if (m.rfind(pre, 0) == 0) return Bad(p + "." + k, m.substr(pre.size() + 1));
    }
    return Bad(p + (f.cron ? ".cron" : ""), m);
  }
  switch (spec->kind) {
    case ScheduleKind::kIn:
      j.kind = JobKind::kOnce;
      j.delay = spec->in;
      break;
    case ScheduleKind::kAt:
      j.kind = JobKind::kOnce;
      j.at = spec->at;
      break;
    case ScheduleKind::kEvery:
      j.kind = JobKind::kEvery;
      j.period = spec->every;
      break;
    case ScheduleKind::kCron:
      j.kind = JobKind::kCron;
      j.cron = *f.cron;
      j.tz = f.tz.value_or("UTC");
      break;
  }
  j.schedule = v.dump();
  return Status();
}

bool ValidToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c <= 32 || c >= 127 ||
        std::string_view("()<>@,;:\\\"/[]?={}").find(c) != std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// A target's optional "timeout" (> 0), into its canonical form.
Status ParseTargetTimeout(const json& v, const std::string& p, json& canon) {
  if (!v.contains("timeout")) return Status();
  auto d = GetDuration(v.at("timeout"), p + ".timeout");
  if (!d.ok()) return d.status();
  if (*d <= Duration(0)) return Bad(p + ".timeout", "must be > 0");
  canon["timeout"] = FormatDuration(*d);
  return Status();
}

Status ParseHttpTargetJson(const json& v, const std::string& p, json& canon) {
  if (!v.is_object()) return Bad(p, "must be an object");
  AX_RETURN_IF_ERROR(OnlyKeys(v, p, {"method", "url", "headers", "body", "timeout"}));
  std::string method = "POST";
  if (v.contains("method")) {
    auto m = GetString(v.at("method"), p + ".method");
    if (!m.ok()) return m.status();
    method = *m;
    for (char& c : method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (!ValidToken(method)) return Bad(p + ".method", "not an HTTP method");
  }
  if (!v.contains("url")) return Bad(p + ".url", "required");
  auto url = GetString(v.at("url"), p + ".url");
  if (!url.ok()) return url.status();
  HttpTargetSpec spec;
  AX_RETURN_IF_ERROR(SplitHttpUrl(*url, p + ".url", spec));
  json headers = json::object();
  if (v.contains("headers")) {
    const json& h = v.at("headers");
    if (!h.is_object()) return Bad(p + ".headers", "must be an object of strings");
    for (auto it = h.begin(); it != h.end(); ++it) {
      std::string hp = p + ".headers." + it.key();
      if (!ValidToken(it.key())) return Bad(hp, "not a header name");
      auto val = GetString(it.value(), hp);
      if (!val.ok()) return val.status();
      if (val->find_first_of("\r\n") != std::string::npos) return Bad(hp, "contains a line break");
      headers[it.key()] = *val;
    }
  }
  std::string body;
  if (v.contains("body")) {
    auto b = GetString(v.at("body"), p + ".body");
    if (!b.ok()) return b.status();
    body = *b;
  }
  canon = json{{"method", method}, {"url", *url}, {"headers", headers}, {"body", body}};
  return ParseTargetTimeout(v, p, canon);
}

Status ParseExecTargetJson(const json& v, const std::string& p, json& canon) {
  if (!v.is_object()) return Bad(p, "must be an object");
  AX_RETURN_IF_ERROR(OnlyKeys(v, p, {"argv", "timeout"}));
  if (!v.contains("argv")) return Bad(p + ".argv", "required");
  const json& a = v.at("argv");
  if (!a.is_array() || a.empty()) return Bad(p + ".argv", "must be a non-empty array of strings");
  json argv = json::array();
  for (size_t i = 0; i < a.size(); ++i) {
    auto s = GetString(a[i], p + ".argv[" + std::to_string(i) + "]");
    if (!s.ok()) return s.status();
    if (s->find('\0') != std::string::npos) return Bad(p + ".argv", "contains a NUL byte");
    argv.push_back(*s);
  }
  if (argv[0].get_ref<const std::string&>().empty()) return Bad(p + ".argv[0]", "empty program");
  canon = json{{"argv", argv}};
  return ParseTargetTimeout(v, p, canon);
}

Status ParseTarget(const json& v, const std::string& p, DurableJob& j) {
  if (!v.is_object() || v.size() != 1)
    return Bad(p, "must be {\"http\": {...}} or {\"exec\": {...}}");
  AX_RETURN_IF_ERROR(OnlyKeys(v, p, {"http", "exec"}));
  json canon;
  if (v.contains("http")) {
    AX_RETURN_IF_ERROR(ParseHttpTargetJson(v.at("http"), p + ".http", canon));
    j.handler = "http";
  } else {
    AX_RETURN_IF_ERROR(ParseExecTargetJson(v.at("exec"), p + ".exec", canon));
    j.handler = "exec";
  }
  j.payload = canon.dump();
  return Status();
}

Status ParseRetry(const json& v, const std::string& p, RetryPolicy& r) {
  if (!v.is_object()) return Bad(p, "must be an object");
  AX_RETURN_IF_ERROR(OnlyKeys(v, p, {"max_attempts", "backoff", "base", "cap", "jitter"}));
  r.cap = std::chrono::hours(1);
  if (v.contains("max_attempts")) {
    auto n = GetInt(v.at("max_attempts"), p + ".max_attempts", 1, 1000);
    if (!n.ok()) return n.status();
    r.max_attempts = static_cast<int>(*n);
  }
  if (v.contains("backoff")) {
    auto b = GetString(v.at("backoff"), p + ".backoff");
    if (!b.ok()) return b.status();
    if (!ByName(*b, {Backoff::kFixed, Backoff::kLinear, Backoff::kExponential}, BackoffName,
                r.backoff)) {
      return Bad(p + ".backoff", "expected fixed, linear or exponential");
    }
  }
  for (auto [name, slot] : {std::pair{"base", &r.base}, std::pair{"cap", &r.cap}}) {
    if (!v.contains(name)) continue;
    auto d = GetDuration(v.at(name), p + "." + name);
    if (!d.ok()) return d.status();
    *slot = *d;
  }
  if (v.contains("jitter")) {
    if (!v.at("jitter").is_boolean()) return Bad(p + ".jitter", "must be true or false");
    r.jitter = v.at("jitter").get<bool>();
  }
  if (r.base <= Duration(0) && r.max_attempts > 1) return Bad(p + ".base", "must be > 0");
  if (r.cap < r.base) return Bad(p + ".cap", "must be >= base");
  return Status();
}

Status ParseJobObject(const json& v, const std::string& pre, DurableJob& j) {
  if (!v.is_object())
    return Bad(pre.empty() ? "body" : pre.substr(0, pre.size() - 1), "must be a JSON object");
  AX_RETURN_IF_ERROR(OnlyKeys(v, pre.empty() ? "" : pre.substr(0, pre.size() - 1),
                              {"id", "schedule", "target", "retry", "timeout", "overlap", "misfire",
                               "max_catch_up", "parent"}));
  if (v.contains("id")) {
    auto id = GetString(v.at("id"), pre + "id");
    if (!id.ok()) return id.status();
    j.id = *id;
    if (j.id.empty()) return Bad(pre + "id", "must not be empty");
    if (j.id.size() > 200) return Bad(pre + "id", "at most 200 characters");
    for (char c : j.id) {
      bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' ||
                c == '-';
      if (!ok) return Bad(pre + "id", "only letters, digits and . _ : - are allowed");
    }
  }
  if (!v.contains("schedule")) return Bad(pre + "schedule", "required");
  AX_RETURN_IF_ERROR(ParseSchedule(v.at("schedule"), pre + "schedule", j));
  if (!v.contains("target")) return Bad(pre + "target", "required");
  AX_RETURN_IF_ERROR(ParseTarget(v.at("target"), pre + "target", j));
  if (v.contains("retry")) AX_RETURN_IF_ERROR(ParseRetry(v.at("retry"), pre + "retry", j.retry));
  if (v.contains("timeout")) {
    auto d = GetDuration(v.at("timeout"), pre + "timeout");
    if (!d.ok()) return d.status();
    j.timeout = *d;
  }
  if (v.contains("overlap")) {
    auto o = GetString(v.at("overlap"), pre + "overlap");
    if (!o.ok()) return o.status();
    if (!ByName(*o, {Overlap::kSkip, Overlap::kBufferOne, Overlap::kConcurrent, Overlap::kReplace},
                OverlapName, j.overlap)) {
      return Bad(pre + "overlap", "expected skip, buffer_one, concurrent or replace");
    }
  }
  if (v.contains("misfire")) {
    auto m = GetString(v.at("misfire"), pre + "misfire");
    if (!m.ok()) return m.status();
    auto pol = ParseMisfirePolicy(*m);
    if (!pol.ok()) return Bad(pre + "misfire", "expected skip, once or all");
    j.misfire = *pol == MisfirePolicy::kSkip   ? Misfire::kSkip
                : *pol == MisfirePolicy::kOnce ? Misfire::kOnce
                                               : Misfire::kAll;
  }
  if (v.contains("max_catch_up")) {
    auto n = GetInt(v.at("max_catch_up"), pre + "max_catch_up", 0, 100000);
    if (!n.ok()) return n.status();
    j.max_catch_up = static_cast<int>(*n);
  }
  if (v.contains("parent")) {
    auto s = GetString(v.at("parent"), pre + "parent");
    if (!s.ok()) return s.status();
    j.parent = *s;
  }
  if (j.timeout > Duration(0)) {
    // The request of an http/exec target is bounded by the job's timeout
    // unless the target sets its own.
    json payload = json::parse(j.payload);
    if (!payload.contains("timeout")) {
      payload["timeout"] = FormatDuration(j.timeout);
      j.payload = payload.dump();
    }
  }
  return Status();
}

// A stored payload: the dump of a json object, which holds each key once.
Result<json> ParseJson(std::string_view text) {
  json v = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) return Status::InvalidArgument("body: malformed JSON");
  return v;
}

// A client's request body: also refuses a key that appears twice in one
// object, which nlohmann would settle silently (the last one wins).
Result<json> ParseRequestJson(std::string_view text) {
  std::vector<std::set<std::string>> open;  // the keys of each object being read
  std::string twice;
  auto keys = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open.emplace_back();
    if (event == json::parse_event_t::object_end && !open.empty()) open.pop_back();
    if (event == json::parse_event_t::key && !open.empty() && twice.empty() &&
        !open.back().insert(parsed.get<std::string>()).second) {
      twice = parsed.get<std::string>();
    }
    return true;
  };
  json v = json::parse(text.begin(), text.end(), keys, /*allow_exceptions=*/false);
  if (v.is_discarded()) return Status::InvalidArgument("body: malformed JSON");
  if (!twice.empty()) {
    return Status::InvalidArgument("body: the key \"" + twice + "\" appears twice in one object");
  }
  return v;
}

std::optional<std::string> OptInstant(const std::optional<Instant>& t) {
  if (!t) return std::nullopt;
  return FormatInstant(*t);
}

}  // namespace

Status SplitHttpUrl(std::string_view url, std::string_view field, HttpTargetSpec& out) {
  std::string f(field);
  if (url.rfind("https://", 0) == 0) return Bad(f, "https is not supported yet; use http://");
  if (url.rfind("http://", 0) != 0) return Bad(f, "must start with http://");
  std::string_view rest = url.substr(7);
  rest = rest.substr(0, rest.find('#'));  // a fragment is not sent
  size_t end = rest.find_first_of("/?");
  std::string_view hostport = rest.substr(0, end);
  out.path = end == std::string_view::npos ? "/" : std::string(rest.substr(end));
  if (out.path.front() == '?') out.path.insert(0, "/");
  if (hostport.find('@') != std::string_view::npos)
    return Bad(f, "credentials in URLs are not supported");
  if (Status s = SplitAuthority(hostport, out.host, out.port); !s.ok()) return Bad(f, s.message());
  for (char c : out.path) {
    if (c <= 32 || c == 127) return Bad(f, "the path must be URL-encoded");
  }
  return Status();
}

Result<DurableJob> ParseJobBody(std::string_view text, std::string_view path_prefix) {
  auto v = ParseRequestJson(text);
  if (!v.ok()) return v.status();
  DurableJob j;
  AX_RETURN_IF_ERROR(ParseJobObject(*v, std::string(path_prefix), j));
  return j;
}

Result<JobsBody> ParseJobsBody(std::string_view text) {
  auto v = ParseRequestJson(text);
  if (!v.ok()) return v.status();
  JobsBody out;
  if (v->is_object() && v->contains("jobs")) {
    AX_RETURN_IF_ERROR(OnlyKeys(*v, "", {"jobs"}));
    const json& a = v->at("jobs");
    if (!a.is_array() || a.empty()) return Bad("jobs", "must be a non-empty array");
    if (a.size() > 10000) return Bad("jobs", "at most 10000 jobs per batch");
    out.batch = true;
    std::set<std::string> ids;
    for (size_t i = 0; i < a.size(); ++i) {
      DurableJob j;
      std::string pre = "jobs[" + std::to_string(i) + "].";
      AX_RETURN_IF_ERROR(ParseJobObject(a[i], pre, j));
      if (!j.id.empty() && !ids.insert(j.id).second) return Bad(pre + "id", "duplicate in batch");
      out.jobs.push_back(std::move(j));
    }
    return out;
  }
  DurableJob j;
  AX_RETURN_IF_ERROR(ParseJobObject(*v, "", j));
  out.jobs.push_back(std::move(j));
  return out;
}

Result<JobPatch> ParsePatchBody(std::string_view text) {
  auto v = ParseRequestJson(text);
  if (!v.ok()) return v.status();
  if (!v->is_object()) return Bad("body", "must be a JSON object");
  AX_RETURN_IF_ERROR(OnlyKeys(*v, "", {"delay", "period", "cron", "tz"}));
  int n = v->contains("delay") + v->contains("period") + v->contains("cron");
  if (n != 1) return Bad("body", "give exactly one of delay, period, cron");
  if (v->contains("tz") && !v->contains("cron")) return Bad("tz", "only valid with cron");
  JobPatch p;
  if (v->contains("delay") || v->contains("period")) {
    bool delay = v->contains("delay");
    const char* name = delay ? "delay" : "period";
    auto d = GetDuration(v->at(name), name);
    if (!d.ok()) return d.status();
    if (!delay && *d <= Duration(0)) return Bad("period", "must be > 0");
    p.kind = delay ? JobPatch::Kind::kDelay : JobPatch::Kind::kPeriod;
    p.duration = *d;
    return p;
  }
  auto c = GetString(v->at("cron"), "cron");
  if (!c.ok()) return c.status();
  p.kind = JobPatch::Kind::kCron;
  p.cron = *c;
  p.tz = "UTC";
  if (v->contains("tz")) {
    auto z = GetString(v->at("tz"), "tz");
    if (!z.ok()) return z.status();
    p.tz = *z;
  }
  auto cs = CronSchedule::Parse(p.cron, p.tz);
  if (!cs.ok()) return Bad("cron", cs.status().message());
  return p;
}

Result<HttpTargetSpec> ParseHttpTarget(std::string_view payload) {
  auto v = ParseJson(payload);
  if (!v.ok()) return v.status();
  json canon;
  AX_RETURN_IF_ERROR(ParseHttpTargetJson(*v, "target.http", canon));
  HttpTargetSpec s;
  s.method = canon["method"].get<std::string>();
  s.url = canon["url"].get<std::string>();
  AX_RETURN_IF_ERROR(SplitHttpUrl(s.url, "target.http.url", s));
  for (auto it = canon["headers"].begin(); it != canon["headers"].end(); ++it) {
    s.headers.emplace_back(it.key(), it.value().get<std::string>());
  }
  s.body = canon["body"].get<std::string>();
  if (canon.contains("timeout")) s.timeout = *ParseDuration(canon["timeout"].get<std::string>());
  return s;
}

Result<ExecTargetSpec> ParseExecTarget(std::string_view payload) {
  auto v = ParseJson(payload);
  if (!v.ok()) return v.status();
  json canon;
  AX_RETURN_IF_ERROR(ParseExecTargetJson(*v, "target.exec", canon));
  ExecTargetSpec s;
  for (const auto& a : canon["argv"]) s.argv.push_back(a.get<std::string>());
  if (canon.contains("timeout")) s.timeout = *ParseDuration(canon["timeout"].get<std::string>());
  return s;
}

namespace {

// The schedule as the client wrote it, unless a PATCH changed the period or
// the calendar since: then as the job runs now.
json ScheduleJson(const DurableJob& j) {
  json written = json::parse(j.schedule, nullptr, false);
  auto text = [&written](const char* key, const char* absent) -> std::optional<std::string> {
    if (!written.is_object() || !written.contains(key)) return absent;
    if (!written[key].is_string()) return std::nullopt;
    return written[key].get<std::string>();
  };
  if (j.kind == JobKind::kEvery) {
    if (auto every = text("every", "")) {
      auto d = ParseDuration(*every);
      if (d.ok() && *d == j.period) return written;
    }
    return json{{"every", FormatDuration(j.period)}};
  }
  if (j.kind == JobKind::kCron) {
    if (text("cron", "") == j.cron && text("tz", "UTC") == j.tz) return written;
    return json{{"cron", j.cron}, {"tz", j.tz}};
  }
  if (written.is_discarded()) return j.schedule;
  return written;
}

}  // namespace

std::string JobToJson(const DurableJob& j) {
  json out;
  out["id"] = j.id;
  out["state"] = std::string(JobStateText(j.state));
  out["schedule"] = ScheduleJson(j);
  json payload = json::parse(j.payload, nullptr, false);
  if ((j.handler == "http" || j.handler == "exec") && !payload.is_discarded()) {
    out["target"] = json{{j.handler, payload}};
  } else {
    out["target"] = json{{"handler", j.handler}, {"payload", j.payload}};
  }
  out["retry"] = json{{"max_attempts", j.retry.max_attempts},
                      {"backoff", BackoffName(j.retry.backoff)},
                      {"base", FormatDuration(j.retry.base)},
                      {"cap", FormatDuration(j.retry.cap)},
                      {"jitter", j.retry.jitter}};
  if (j.timeout > Duration(0)) out["timeout"] = FormatDuration(j.timeout);
  out["overlap"] = OverlapName(j.overlap);
  out["misfire"] = MisfireName(j.misfire);
  if (!j.parent.empty()) out["parent"] = j.parent;
  out["next_run"] = OptInstant(j.next_run) ? json(*OptInstant(j.next_run)) : json(nullptr);
  out["attempt"] = j.attempt;
  out["runs"] = j.runs;
  out["failures"] = j.failures;
  out["skips"] = j.skips;
  if (!j.last_error.empty()) out["last_error"] = j.last_error;
  if (!j.reason.empty()) out["reason"] = j.reason;
  if (j.recovered) out["recovered"] = true;
  if (j.state == JobState::kRunning && !j.lease_owner.empty()) {
    out["lease"] =
        json{{"owner", j.lease_owner}, {"expires_at", OptInstant(j.lease_expiry).value_or("")}};
  }
  out["created_at"] = FormatInstant(j.created_at);
  out["updated_at"] = FormatInstant(j.updated_at);
  if (j.finished_at) out["finished_at"] = FormatInstant(*j.finished_at);
  return ResponseText(out);
}

std::string ResponseText(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool SameSpec(const DurableJob& a, const DurableJob& b) {
  return a.handler == b.handler && a.payload == b.payload && a.kind == b.kind &&
         a.schedule == b.schedule && a.retry.max_attempts == b.retry.max_attempts &&
         a.retry.backoff == b.retry.backoff && a.retry.base == b.retry.base &&
         a.retry.cap == b.retry.cap && a.retry.jitter == b.retry.jitter && a.timeout == b.timeout &&
         a.overlap == b.overlap && a.misfire == b.misfire && a.parent == b.parent;
}

}  // namespace ax::server
