// The client verbs: flags to JSON, one HTTP request, the answer printed.
#include "cli/client.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "server/http_client.h"
#include "server/token_file.h"
#include "server/url.h"

namespace ax::cli {
namespace {

using nlohmann::json;

struct Conn {
  std::string server = "http://127.0.0.1:7070";
  std::string token_file;
};

void AddConnFlags(CLI::App* c, Conn& conn) {
  if (const char* s = std::getenv("AX_SERVER")) conn.server = s;
  if (const char* t = std::getenv("AX_TOKEN_FILE")) conn.token_file = t;
  c->add_option("--server", conn.server, "ax serve address ($AX_SERVER)")->capture_default_str();
  c->add_option("--token-file", conn.token_file, "file holding the bearer token ($AX_TOKEN_FILE)");
}

[[noreturn]] void Fail(const std::string& msg, int code = 1) {
  std::cerr << "ax: " << msg << "\n";
  throw CLI::RuntimeError(code);
}

// A request body. The flags' values become JSON strings, which must be
// UTF-8; nlohmann's dump() throws on other bytes (it ended the process).
std::string BodyText(const json& body) {
  try {
    return body.dump();
  } catch (const json::type_error&) {
    Fail("a value given is not UTF-8 text, which a JSON body needs", 2);
  }
}

std::string Encode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == ':') {
      out.push_back(static_cast<char>(c));
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// One request; returns the JSON answer of a 2xx, fails otherwise.
json Call(const Conn& conn, const std::string& method, const std::string& path,
          const std::string& body = "") {
  server::ClientRequest req;
  std::string base;
  if (Status s = server::ParseServerUrl(conn.server, req.host, req.port, base); !s.ok()) {
    Fail(s.message(), 2);
  }
  req.method = method;
  req.target = base + path;
  if (!body.empty()) {
    req.body = body;
    req.headers.emplace_back("Content-Type", "application/json");
  }
  if (!conn.token_file.empty()) {
    auto tok = server::ReadTokenFile(conn.token_file);
    if (!tok.ok()) Fail(tok.status().message(), 2);
    req.headers.emplace_back("Authorization", "Bearer " + *tok);
  }
  auto res = server::HttpDo(req, std::chrono::seconds(30));
  if (!res.ok()) Fail("cannot reach " + conn.server + ": " + res.status().message());
  json j = json::parse(res->body, nullptr, false);
  if (res->status < 200 || res->status > 299) {
    std::string msg = "HTTP " + std::to_string(res->status);
    if (!j.is_discarded() && j.contains("error")) {
      msg += ": " + j["error"].value("message", std::string());
    }
    Fail(msg);
  }
  if (j.is_discarded()) Fail("the server sent a malformed answer");
  return j;
}

std::string Str(const json& j, const char* k) {
  if (!j.contains(k) || j[k].is_null()) return "-";
  return j[k].is_string() ? j[k].get<std::string>() : j[k].dump();
}

struct AddFlags {
  Conn conn;
  std::string id, in, at, every, cron, tz, url, method, data, timeout, overlap, misfire, parent;
  std::vector<std::string> headers, exec;
  std::vector<std::string> command;  // after `--`: an exec target whose args may start with '-'
  int retry = 0;
  std::string backoff, retry_base, retry_cap;
  bool jitter = false;
};

// The target of `ax add`: --url (with its method, body and headers), --exec, or
// a command after `--`.
json AddTarget(const AddFlags& f) {
  if (!f.url.empty()) {
    json http{{"url", f.url}};
    if (!f.method.empty()) http["method"] = f.method;
    if (!f.data.empty()) http["body"] = f.data;
    json headers = json::object();
    for (const auto& h : f.headers) {
      size_t colon = h.find(':');
      if (colon == std::string::npos) Fail("--header: expected 'Name: value', got '" + h + "'", 2);
      std::string v = h.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.erase(v.begin());
      headers[h.substr(0, colon)] = v;
    }
    if (!headers.empty()) http["headers"] = headers;
    return json{{"http", http}};
  }
  if (!f.exec.empty()) return json{{"exec", {{"argv", f.exec}}}};
  if (!f.command.empty()) return json{{"exec", {{"argv", f.command}}}};
  Fail("give a target: --url URL, --exec PROGRAM [ARGS...] or -- PROGRAM [ARGS...]", 2);
}

// The body of POST /v1/jobs for `ax add`'s flags.
json AddBody(const AddFlags& f) {
  json body;
  if (!f.id.empty()) body["id"] = f.id;
  json sched = json::object();
  if (!f.in.empty()) sched["in"] = f.in;
  if (!f.at.empty()) sched["at"] = f.at;
  if (!f.every.empty()) sched["every"] = f.every;
  if (!f.cron.empty()) sched["cron"] = f.cron;
  if (!f.tz.empty()) sched["tz"] = f.tz;
  if (sched.empty()) Fail("give one of --in, --at, --every, --cron", 2);
  body["schedule"] = sched;
  body["target"] = AddTarget(f);
  json retry = json::object();
  if (f.retry > 0) retry["max_attempts"] = f.retry;
  if (!f.backoff.empty()) retry["backoff"] = f.backoff;
  if (!f.retry_base.empty()) retry["base"] = f.retry_base;
  if (!f.retry_cap.empty()) retry["cap"] = f.retry_cap;
  if (f.jitter) retry["jitter"] = true;
  if (!retry.empty()) body["retry"] = retry;
  if (!f.timeout.empty()) body["timeout"] = f.timeout;
  if (!f.overlap.empty()) body["overlap"] = f.overlap;
  if (!f.misfire.empty()) body["misfire"] = f.misfire;
  if (!f.parent.empty()) body["parent"] = f.parent;
  return body;
}

void AddAdd(CLI::App& app) {
  auto f = std::make_shared<AddFlags>();
  CLI::App* c = app.add_subcommand("add", "Add a job to ax serve (POST /v1/jobs)");
  c->footer(
      "Examples:\n"
      "  ax add --id order-1001 --in 30m --url http://127.0.0.1:9000/close --data "
      "'{\"order\":1001}'\n"
      "  ax add --every 10s --url http://127.0.0.1:9000/tick\n"
      "  ax add --cron '0 2 * * *' --tz Asia/Shanghai --url http://127.0.0.1:9000/report\n"
      "  ax add --every 1h -- /bin/sh -c 'backup.sh --full'   (ax serve --allow-exec)");
  AddConnFlags(c, f->conn);
  c->add_option("--id", f->id, "job id (also the idempotency key); generated when absent");
  auto* in = c->add_option("--in", f->in, "run once after this duration (30m, PT30M)");
  auto* at = c->add_option("--at", f->at, "run once at this RFC 3339 instant");
  auto* every = c->add_option("--every", f->every, "run every period (10s, 1h)");
  auto* cron = c->add_option("--cron", f->cron, "run on this cron expression");
  c->add_option("--tz", f->tz, "IANA zone of --cron (default UTC)")->needs(cron);
  in->excludes(at)->excludes(every)->excludes(cron);
  at->excludes(every)->excludes(cron);
  every->excludes(cron);
  auto* url = c->add_option("--url", f->url, "http target: the URL to call");
  c->add_option("--method", f->method, "http target: method (default POST)")->needs(url);
  c->add_option("--header", f->headers, "http target: 'Name: value' (repeatable)")->needs(url);
  c->add_option("--data", f->data, "http target: request body")->needs(url);
  auto* exec = c->add_option("--exec", f->exec, "exec target: program and arguments (no shell)")
                   ->expected(1, -1);
  auto* command = c->add_option("COMMAND", f->command,
                                "exec target, after --: program and arguments, which may "
                                "start with '-' (no shell)");
  url->excludes(exec)->excludes(command);
  exec->excludes(command);
  c->add_option("--retry", f->retry, "maximum attempts in all (1 = no retry)");
  c->add_option("--backoff", f->backoff, "fixed, linear or exponential");
  c->add_option("--retry-base", f->retry_base, "backoff base (e.g. 1s)");
  c->add_option("--retry-cap", f->retry_cap, "backoff cap (e.g. 1m)");
  c->add_flag("--jitter", f->jitter, "randomise the backoff");
  c->add_option("--timeout", f->timeout, "fail an attempt after this long");
  c->add_option("--overlap", f->overlap, "skip, buffer_one, concurrent or replace");
  c->add_option("--misfire", f->misfire, "skip, once or all");
  c->add_option("--parent", f->parent, "run only after this one-shot job succeeded");
  c->callback([f] {
    json res = Call(f->conn, "POST", "/v1/jobs", BodyText(AddBody(*f)));
    std::cout << Str(res, "id") << "\t" << Str(res, "state")
              << "\tnext_run=" << Str(res, "next_run") << "\n";
  });
}

void AddLs(CLI::App& app) {
  struct Flags {
    Conn conn;
    std::string state;
    int limit = 100;
    bool json_out = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* c = app.add_subcommand("ls", "List jobs (GET /v1/jobs), all pages");
  AddConnFlags(c, f->conn);
  c->add_option("--state", f->state, "waiting, running, paused, completed, cancelled or dead");
  c->add_option("--limit", f->limit, "page size")->capture_default_str();
  c->add_flag("--json", f->json_out, "print the JSON of each job, one per line");
  c->callback([f] {
    std::string cursor;
    for (bool first = true;; first = false) {
      std::string q = "/v1/jobs?limit=" + std::to_string(f->limit);
      if (!f->state.empty()) q += "&state=" + Encode(f->state);
      if (!cursor.empty()) q += "&cursor=" + Encode(cursor);
      json res = Call(f->conn, "GET", q);  // exits on an error, before the header
      if (first && !f->json_out)
        printf("%-32s %-10s %-30s %-6s %s\n", "ID", "STATE", "NEXT_RUN", "RUNS", "SCHEDULE");
      for (const auto& j : res["jobs"]) {
        if (f->json_out) {
          std::cout << j.dump() << "\n";
        } else {
          printf("%-32s %-10s %-30s %-6s %s\n", Str(j, "id").c_str(), Str(j, "state").c_str(),
                 Str(j, "next_run").c_str(), Str(j, "runs").c_str(), Str(j, "schedule").c_str());
        }
      }
      if (!res.contains("next_cursor") || res["next_cursor"].is_null()) break;
      cursor = res["next_cursor"].get<std::string>();
    }
  });
}

// get / rm / pause / resume: one id, one request, the job printed.
void AddIdVerb(CLI::App& app, const char* name, const char* help, const char* method,
               const char* suffix) {
  struct Flags {
    Conn conn;
    std::string id;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* c = app.add_subcommand(name, help);
  AddConnFlags(c, f->conn);
  c->add_option("ID", f->id, "job id")->required();
  std::string m = method, s = suffix;
  bool pretty = std::string(name) == "get";
  c->callback([f, m, s, pretty] {
    json res = Call(f->conn, m, "/v1/jobs/" + Encode(f->id) + s);
    if (pretty) {
      std::cout << res.dump(2) << "\n";
    } else {
      std::cout << Str(res, "id") << "\t" << Str(res, "state") << "\n";
    }
  });
}

void AddSet(CLI::App& app) {
  struct Flags {
    Conn conn;
    std::string id, delay, period, cron, tz;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* c = app.add_subcommand("set", "Change a job's schedule (PATCH /v1/jobs/ID)");
  AddConnFlags(c, f->conn);
  c->add_option("ID", f->id, "job id")->required();
  auto* d = c->add_option("--delay", f->delay, "next run after this duration from now");
  auto* p = c->add_option("--period", f->period, "new period of a periodic job");
  auto* cr = c->add_option("--cron", f->cron, "new cron expression of a cron job");
  c->add_option("--tz", f->tz, "zone of --cron")->needs(cr);
  d->excludes(p)->excludes(cr);
  p->excludes(cr);
  c->callback([f] {
    json body;
    if (!f->delay.empty()) body["delay"] = f->delay;
    if (!f->period.empty()) body["period"] = f->period;
    if (!f->cron.empty()) body["cron"] = f->cron;
    if (!f->tz.empty()) body["tz"] = f->tz;
    if (body.empty()) Fail("give one of --delay, --period, --cron", 2);
    json res = Call(f->conn, "PATCH", "/v1/jobs/" + Encode(f->id), BodyText(body));
    std::cout << Str(res, "id") << "\t" << Str(res, "state")
              << "\tnext_run=" << Str(res, "next_run") << "\n";
  });
}

}  // namespace

void AddClientCommands(CLI::App& app) {
  AddAdd(app);
  AddLs(app);
  AddIdVerb(app, "get", "Show a job (GET /v1/jobs/ID)", "GET", "");
  AddIdVerb(app, "rm", "Cancel a job (DELETE /v1/jobs/ID)", "DELETE", "");
  AddIdVerb(app, "pause", "Pause a job (POST /v1/jobs/ID/pause)", "POST", "/pause");
  AddIdVerb(app, "resume", "Resume a paused job (POST /v1/jobs/ID/resume)", "POST", "/resume");
  AddSet(app);
}

}  // namespace ax::cli
