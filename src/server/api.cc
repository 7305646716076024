// Routing, JSON and status codes of the HTTP API.
#include "server/api.h"

#include <nlohmann/json.hpp>

#include "ax/instant.h"

#include "server/job_body.h"

namespace ax::server {
namespace {

using nlohmann::json;

int HttpStatusFor(StatusCode c) {
  switch (c) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kInvalidState:
      return 409;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kShuttingDown:
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

std::string UrlDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else if (s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::map<std::string, std::string> ParseQuery(std::string_view q) {
  std::map<std::string, std::string> out;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view kv = q.substr(0, amp);
    size_t eq = kv.find('=');
    out[UrlDecode(kv.substr(0, eq))] =
        eq == std::string_view::npos ? "" : UrlDecode(kv.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return out;
}

ApiResponse Json(int status, std::string body) {
  ApiResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char d = 0;
  for (size_t i = 0; i < a.size(); ++i) d |= static_cast<unsigned char>(a[i] ^ b[i]);
  return d == 0;
}

}  // namespace

Api::Api(DurableScheduler& d, ApiOptions options) : d_(d), options_(std::move(options)) {}

ApiResponse Api::Error(int http_status, std::string_view code, std::string_view message) {
  json e{{"code", code}, {"message", message}};
  // Messages name the field first: "schedule.every: must be > 0".
  size_t colon = message.find(": ");
  if (http_status == 400 && colon != std::string_view::npos &&
      message.substr(0, colon).find(' ') == std::string_view::npos) {
    e["field"] = message.substr(0, colon);
  }
  return Json(http_status, ResponseText(json{{"error", e}}));
}

ApiResponse Api::FromStatus(const Status& s) {
  return Error(HttpStatusFor(s.code()), StatusCodeName(s.code()), s.message());
}

void Api::CountResponse(int status) {
  std::lock_guard lock(counts_mu_);
  ++responses_[status];
}

void Api::Handle(const ApiRequest& req, Respond respond) {
  std::string_view target = req.target;
  size_t qpos = target.find('?');
  std::string_view path = target.substr(0, qpos);
  std::string_view query = qpos == std::string_view::npos ? "" : target.substr(qpos + 1);
  auto reply = [&](ApiResponse r) {
    CountResponse(r.status);
    respond(std::move(r));
  };
  // HEAD is GET without the body, which the HTTP layer leaves out (RFC 9110 9.3.2).
  const std::string_view method =
      req.method == "HEAD" ? std::string_view{"GET"} : std::string_view{req.method};
  if (path == "/healthz") {
    if (method != "GET") {
      ApiResponse r = Error(405, "MethodNotAllowed", "use GET");
      r.allow = "GET";
      return reply(std::move(r));
    }
    if (draining()) return reply(Json(503, R"({"status":"draining"})"));
    return reply(Json(200, R"({"status":"ok"})"));
  }
  if (!options_.token.empty()) {
    constexpr std::string_view kBearer = "Bearer ";
    std::string_view a = req.authorization;
    if (a.substr(0, kBearer.size()) != kBearer ||
        !ConstantTimeEquals(a.substr(kBearer.size()), options_.token)) {
      return reply(
          Error(401, "Unauthenticated", "a valid Authorization: Bearer token is required"));
    }
  }
  if (draining()) return reply(Error(503, "ShuttingDown", "the server is draining"));
  auto method_not_allowed = [&](const char* allow) {
    ApiResponse r = Error(405, "MethodNotAllowed", std::string("allowed: ") + allow);
    r.allow = allow;
    reply(std::move(r));
  };
  if (path == "/metrics") return method == "GET" ? reply(Metrics()) : method_not_allowed("GET");
  if (path == "/v1/stats") return method == "GET" ? reply(Stats()) : method_not_allowed("GET");
  if (path == "/v1/jobs") {
    if (method == "POST") {
      return PostJobs(req, [this, respond](ApiResponse r) {
        CountResponse(r.status);
        respond(std::move(r));
      });
    }
    if (method == "GET") return reply(ListJobs(query));
    return method_not_allowed("GET, POST");
  }
  constexpr std::string_view kJobs = "/v1/jobs/";
  if (path.substr(0, kJobs.size()) == kJobs && path.size() > kJobs.size()) {
    std::string_view rest = path.substr(kJobs.size());
    std::string action;
    if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
      action = std::string(rest.substr(slash + 1));
      rest = rest.substr(0, slash);
    }
    std::string id = UrlDecode(rest);
    if (action.empty()) {
      if (method == "GET") return reply(GetJob(id));
      if (method == "DELETE") return reply(ChangeJob(id, d_.Cancel(id)));
      if (method == "PATCH") return reply(Patch(id, req.body));
      return method_not_allowed("GET, DELETE, PATCH");
    }
    if (action == "pause" || action == "resume") {
      if (method != "POST") return method_not_allowed("POST");
      return reply(ChangeJob(id, action == "pause" ? d_.Pause(id) : d_.Resume(id)));
    }
  }
  reply(Error(404, "NotFound", "no route for " + std::string(path)));
}

void Api::PostJobs(const ApiRequest& req, const Respond& respond) {
  auto body = ParseJobsBody(req.body);
  if (!body.ok()) return respond(FromStatus(body.status()));
  for (size_t i = 0; i < body->jobs.size(); ++i) {
    if (body->jobs[i].handler == "exec" && !options_.allow_exec) {
      std::string pre = body->batch ? "jobs[" + std::to_string(i) + "]." : "";
      return respond(Error(400, "InvalidArgument",
                           pre + "target.exec: refused: the daemon runs without --allow-exec"));
    }
  }
  bool batch = body->batch;
  // The submitted specs are kept to tell "exists" from "conflict" when an id
  // is taken; jobs without an id get a fresh one and cannot collide.
  bool named = false;
  for (const DurableJob& j : body->jobs) named = named || !j.id.empty();
  auto specs = std::make_shared<std::vector<DurableJob>>();
  if (named) *specs = body->jobs;
  d_.SubmitAsync(
      std::move(body->jobs), [respond, batch, specs](Result<std::vector<SubmitResult>> r) {
        if (!r.ok()) {
          Status s = r.status();
          // An unknown parent is a bad field of the body, not a missing resource.
          if (s.code() == StatusCode::kNotFound) s = Status::InvalidArgument(s.message());
          return respond(FromStatus(s));
        }
        if (!batch) {
          const SubmitResult& one = r->front();
          if (one.created) return respond(Json(201, JobToJson(one.job)));
          if (!specs->empty() && SameSpec(one.job, specs->front())) {
            return respond(Json(200, JobToJson(one.job)));
          }
          return respond(Error(409, "AlreadyExists",
                               "id: job \"" + one.job.id + "\" exists with a different spec"));
        }
        std::string out = "{\"jobs\":[";
        bool all_created = true;
        for (size_t i = 0; i < r->size(); ++i) {
          const SubmitResult& s = (*r)[i];
          const char* result = s.created                                           ? "created"
                               : i < specs->size() && SameSpec(s.job, (*specs)[i]) ? "exists"
                                                                                   : "conflict";
          all_created = all_created && s.created;
          if (i > 0) out += ",";
          out += "{\"id\":" + ResponseText(s.job.id) + ",\"result\":\"" + result +
                 "\",\"state\":\"" + std::string(JobStateText(s.job.state)) + "\"}";
        }
        out += "]}";
        respond(Json(all_created ? 201 : 200, std::move(out)));
      });
}

ApiResponse Api::GetJob(const std::string& id) {
  auto j = d_.Get(id);
  if (!j.ok()) return FromStatus(j.status());
  return Json(200, JobToJson(*j));
}

ApiResponse Api::ChangeJob(const std::string& id, const Status& s) {
  if (!s.ok()) return FromStatus(s);
  return GetJob(id);
}

ApiResponse Api::Patch(const std::string& id, const std::string& body) {
  auto p = ParsePatchBody(body);
  if (!p.ok()) return FromStatus(p.status());
  switch (p->kind) {
    case JobPatch::Kind::kDelay:
      return ChangeJob(id, d_.SetDelay(id, p->duration));
    case JobPatch::Kind::kPeriod:
      return ChangeJob(id, d_.SetPeriod(id, p->duration));
    case JobPatch::Kind::kCron:
      return ChangeJob(id, d_.SetCron(id, p->cron, p->tz));
  }
  return Error(500, "Internal", "unknown patch");
}

ApiResponse Api::ListJobs(std::string_view query) {
  auto q = ParseQuery(query);
  ListQuery lq;
  for (const auto& [k, v] : q) {
    if (k == "state") {
      if (v.empty()) continue;
      auto s = ParseJobState(v);
      if (!s) {
        return Error(400, "InvalidArgument",
                     "state: expected waiting, running, paused, completed, cancelled or dead");
      }
      lq.state = s;
    } else if (k == "limit") {
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 1 || n > 1000) {
        return Error(400, "InvalidArgument", "limit: must be an integer from 1 to 1000");
      }
      lq.limit = static_cast<size_t>(n);
    } else if (k == "cursor") {
      lq.after_id = v;
    } else {
      return Error(400, "InvalidArgument", k + ": unknown query parameter");
    }
  }
  auto jobs = d_.List(lq);
  if (!jobs.ok()) return FromStatus(jobs.status());
  std::string out = "{\"jobs\":[";
  for (size_t i = 0; i < jobs->size(); ++i) {
    if (i > 0) out += ",";
    out += JobToJson((*jobs)[i]);
  }
  out += "],\"next_cursor\":";
  out += jobs->size() == lq.limit ? ResponseText(jobs->back().id) : "null";
  out += "}";
  return Json(200, std::move(out));
}

ApiResponse Api::Stats() {
  DurableStats s = d_.GetStats();
  json by_state = json::object();
  for (size_t i = 0; i < s.jobs_by_state.size(); ++i) {
    by_state[std::string(JobStateText(static_cast<JobState>(i)))] = s.jobs_by_state[i];
  }
  const ax::Stats& e = s.engine;
  json out{
      {"jobs", by_state},
      {"engine",
       {{"pending", e.pending},
        {"running", e.running},
        {"paused", e.paused},
        {"queue_depth", e.queue_depth},
        {"busy_workers", e.busy_workers},
        {"workers", e.workers},
        {"fired", e.fired},
        {"succeeded", e.succeeded},
        {"failed", e.failed},
        {"retried", e.retried},
        {"dead", e.dead},
        {"skipped", e.skipped},
        {"cancelled", e.cancelled},
        {"timed_out", e.timed_out},
        {"wakeups", e.wakeups},
        {"handed_ahead", e.handed_ahead},
        {"started_ahead", e.started_ahead},
        {"fired_by_workers", e.fired_by_workers},
        {"lateness_p50_ns", e.lateness.QuantileUpperBoundNs(0.5)},
        {"lateness_p99_ns", e.lateness.QuantileUpperBoundNs(0.99)},
        {"lateness_max_ns", e.lateness.max_ns}}},
      {"window",
       {{"loaded", s.loaded}, {"horizon", FormatInstant(s.horizon)}, {"recovered", s.recovered}}},
      {"store",
       {{"commits", s.store.commits},
        {"writes", s.store.writes},
        {"jobs_inserted", s.store.jobs_inserted},
        {"commit_latency_avg_ns", s.store.commit_latency_count == 0
                                      ? 0
                                      : s.store.commit_latency_sum_ns /
                                            static_cast<int64_t>(s.store.commit_latency_count)}}}};
  return Json(200, ResponseText(out));
}

namespace {

void Metric(std::string& o, const char* name, const char* type, const char* help, uint64_t v) {
  o += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name +
       " " + std::to_string(v) + "\n";
}

template <class Counts>
void Histogram(std::string& o, const char* name, const char* help, const Counts& counts,
               uint64_t count, int64_t sum_ns) {
  o += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
  uint64_t cum = 0;
  for (size_t i = 0; i < LatenessHistogram::kBoundsNs.size(); ++i) {
    cum += counts[i];
    char le[32];
    snprintf(le, sizeof(le), "%g", static_cast<double>(LatenessHistogram::kBoundsNs[i]) / 1e9);
    o += std::string(name) + "_bucket{le=\"" + le + "\"} " + std::to_string(cum) + "\n";
  }
  o += std::string(name) + "_bucket{le=\"+Inf\"} " + std::to_string(count) + "\n";
  char sum[64];
  snprintf(sum, sizeof(sum), "%.9f", static_cast<double>(sum_ns) / 1e9);
  o += std::string(name) + "_sum " + sum + "\n" + name + "_count " + std::to_string(count) + "\n";
}

}  // namespace

ApiResponse Api::Metrics() {
  DurableStats s = d_.GetStats();
  const ax::Stats& e = s.engine;
  std::string o;
  Metric(o, "ax_jobs_pending", "gauge", "Jobs waiting in the engine (the load window).", e.pending);
  Metric(o, "ax_jobs_running", "gauge", "Runs on workers now.", e.running);
  Metric(o, "ax_jobs_paused", "gauge", "Paused jobs in the engine.", e.paused);
  Metric(o, "ax_jobs_loaded", "gauge", "Durable jobs held in the engine.", s.loaded);
  o += "# HELP ax_stored_jobs Stored jobs by state.\n# TYPE ax_stored_jobs gauge\n";
  for (size_t i = 0; i < s.jobs_by_state.size(); ++i) {
    o += "ax_stored_jobs{state=\"" + std::string(JobStateText(static_cast<JobState>(i))) + "\"} " +
         std::to_string(s.jobs_by_state[i]) + "\n";
  }
  Metric(o, "ax_runs_fired_total", "counter", "Runs handed to workers.", e.fired);
  Metric(o, "ax_runs_succeeded_total", "counter", "Runs that succeeded.", e.succeeded);
  Metric(o, "ax_runs_failed_total", "counter", "Failed attempts.", e.failed);
  Metric(o, "ax_runs_retried_total", "counter", "Attempts retried.", e.retried);
  Metric(o, "ax_jobs_dead_total", "counter", "Dead letters.", e.dead);
  Metric(o, "ax_runs_skipped_total", "counter", "Skipped ticks.", e.skipped);
  Metric(o, "ax_runs_timed_out_total", "counter", "Attempts that timed out.", e.timed_out);
  Metric(o, "ax_scheduler_wakeups_total", "counter", "Wake-ups of the scheduler thread.",
         e.wakeups);
  Metric(o, "ax_jobs_handed_ahead_total", "counter",
         "Jobs handed to an idle worker ahead of their deadline.", e.handed_ahead);
  Metric(o, "ax_runs_started_ahead_total", "counter",
         "Runs a worker started after sleeping until their deadline.", e.started_ahead);
  Metric(o, "ax_runs_fired_by_workers_total", "counter", "Runs a worker fired itself in a storm.",
         e.fired_by_workers);
  Metric(o, "ax_runs_recovered_total", "counter", "Leased runs recovered at start.", s.recovered);
  Histogram(o, "ax_lateness_seconds", "Run start minus its scheduled instant.", e.lateness.counts,
            e.lateness.count, e.lateness.sum_ns);
  Metric(o, "ax_store_commits_total", "counter", "Store transactions.", s.store.commits);
  Metric(o, "ax_store_writes_total", "counter", "Store write operations.", s.store.writes);
  Histogram(o, "ax_store_commit_seconds", "Store write enqueue-to-commit latency.",
            s.store.commit_latency_buckets, s.store.commit_latency_count,
            s.store.commit_latency_sum_ns);
  o += "# HELP ax_http_responses_total HTTP responses by status.\n"
       "# TYPE ax_http_responses_total counter\n";
  {
    std::lock_guard lock(counts_mu_);
    for (const auto& [code, n] : responses_) {
      o += "ax_http_responses_total{code=\"" + std::to_string(code) + "\"} " + std::to_string(n) +
           "\n";
    }
  }
  ApiResponse r;
  r.content_type = "text/plain; version=0.0.4";
  r.body = std::move(o);
  return r;
}

}  // namespace ax::server
