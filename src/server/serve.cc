// ServeCommand: store + durable scheduler + targets + API + HTTP, then wait
// for SIGTERM/SIGINT and drain.
#include "server/serve.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <signal.h>

#include "ax/durable.h"
#include "ax/duration.h"
#include "ax/instant.h"

#include "server/api.h"
#include "server/http_server.h"
#include "server/log.h"
#include "server/targets.h"
#include "server/token_file.h"

namespace ax::server {
namespace {

Result<Duration> Dur(const std::string& flag, const std::string& v) {
  auto d = ParseDuration(v);
  if (!d.ok()) return Status::InvalidArgument(flag + ": " + d.status().message());
  return *d;
}

// Everything checked before anything starts.
struct Plan {
  std::string sqlite_path;
  std::string host;
  uint16_t port = 0;
  std::string token;
  Duration window, retention, drain, timer_slack, hand_ahead, worker_slice;
};

Result<Plan> Check(const ServeConfig& c) {
  Plan p;
  if (c.store.rfind("redis://", 0) == 0) {
    return Status::InvalidArgument(
        "store: redis stores are not yet supported by this build; use sqlite:PATH");
  }
  if (c.store.rfind("sqlite:", 0) != 0 || c.store.size() == 7) {
    return Status::InvalidArgument(
        "store: expected sqlite:PATH or redis://HOST:PORT/QUEUE, got \"" + c.store + "\"");
  }
  p.sqlite_path = c.store.substr(7);
  AX_RETURN_IF_ERROR(SplitHostPort(c.listen, "listen", p.host, p.port));
  if (c.body_limit < 1 || c.body_limit > (size_t{1} << 30)) {
    return Status::InvalidArgument("body-limit: 1 to 1073741824 bytes");
  }
  if (spdlog::level::from_str(c.log_level) == spdlog::level::off && c.log_level != "off") {
    // spdlog takes a name it does not know for "off": every line would go.
    return Status::InvalidArgument(
        "log-level: trace, debug, info, warn, error, critical or off, got \"" + c.log_level + "\"");
  }
  if (c.workers < 1 || c.workers > 4096) return Status::InvalidArgument("workers: 1 to 4096");
  if (c.io_threads < 1 || c.io_threads > 256)
    return Status::InvalidArgument("io-threads: 1 to 256");
  if (c.sync != "full" && c.sync != "normal")
    return Status::InvalidArgument("sync: full or normal");
  if (!c.token_file.empty()) {
    auto t = ReadTokenFile(c.token_file);
    if (!t.ok()) return t.status();
    p.token = *t;
  }
  auto w = Dur("window", c.window);
  if (!w.ok()) return w.status();
  auto r = Dur("retention", c.retention);
  if (!r.ok()) return r.status();
  auto d = Dur("drain-timeout", c.drain_timeout);
  if (!d.ok()) return d.status();
  auto slack = Dur("timer-slack", c.timer_slack);
  if (!slack.ok()) return slack.status();
  if (*slack < Duration(0) || *slack > std::chrono::hours(1)) {
    return Status::InvalidArgument("timer-slack: 0 to 1h");
  }
  p.timer_slack = *slack;
  auto ahead = Dur("hand-ahead", c.hand_ahead);
  if (!ahead.ok()) return ahead.status();
  if (*ahead < Duration(0) || *ahead > std::chrono::seconds(1)) {
    return Status::InvalidArgument("hand-ahead: 0 to 1s");
  }
  p.hand_ahead = *ahead;
  auto slice = Dur("worker-slice", c.worker_slice);
  if (!slice.ok()) return slice.status();
  if (*slice != Duration(0) &&
      (*slice < std::chrono::microseconds(100) || *slice > std::chrono::milliseconds(100))) {
    return Status::InvalidArgument("worker-slice: 0, or 100us to 100ms");
  }
  p.worker_slice = *slice;
  if (*w <= Duration(0)) return Status::InvalidArgument("window: must be > 0");
  p.window = *w;
  p.retention = *r;
  p.drain = *d;
  return p;
}

// The SQLite store and the durable scheduler over it, as the plan says.
Result<std::unique_ptr<DurableScheduler>> OpenDurable(const ServeConfig& c, const Plan& plan) {
  SqliteStoreOptions so;
  so.path = plan.sqlite_path;
  so.synchronous = c.sync;
  auto store = SqliteStore::Open(so);
  if (!store.ok()) {
    spdlog::error("event=store_open_failed path={} error={}", Q(so.path),
                  Q(store.status().message()));
    return store.status();
  }
  DurableOptions dopt;
  dopt.store = std::move(store).value();
  dopt.window = plan.window;
  dopt.retention = plan.retention;
  dopt.engine.workers = c.workers;
  dopt.engine.timer_slack = plan.timer_slack;
  dopt.engine.hand_ahead = plan.hand_ahead;
  dopt.engine.pin_workers = c.pin_workers;
  dopt.engine.worker_slice = plan.worker_slice;
  dopt.engine.on_dead_letter = [](const Event& ev) {
    spdlog::warn("event=dead id={} attempt={} error={}", Q(ev.key), ev.attempt, Q(ev.message));
  };
  dopt.engine.observer = [](const Event& ev) {
    if (spdlog::should_log(spdlog::level::debug)) {
      spdlog::debug("event={} id={} attempt={} msg={}", EventTypeName(ev.type), Q(ev.key),
                    ev.attempt, Q(ev.message));
    }
  };
  return DurableScheduler::Create(std::move(dopt));
}

// Writes the port to `path` whole (a temporary file, then a rename), so that
// a reader never sees it half written.
Status WritePortFile(const std::string& path, uint16_t port) {
  const std::string tmp = path + ".tmp";
  std::ofstream pf(tmp);
  pf << port << "\n";
  pf.close();
  if (!pf || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = strerror(errno);
    std::remove(tmp.c_str());
    return Status::InvalidArgument("port-file: cannot write " + path + ": " + why);
  }
  return Status();
}

// Sets the serve command's options from the keys of a TOML/INI file
// (`workers = 4`, `listen = "127.0.0.1:8080"`), as if given on the command
// line, which wins. CLI11 2.1 reads a config file only for the top-level app,
// so `set_config` on the subcommand left every key unread, without a word.
// A key that names no option is an error.
void ApplyConfigFile(CLI::App& serve, const std::string& path) {
  CLI::ConfigTOML format;  // from_file is not const
  for (const CLI::ConfigItem& item : format.from_file(path)) {
    if (item.name == "++" || item.name == "--") continue;  // a section opens or closes
    CLI::Option* opt = item.parents.empty() && item.name != "config"
                           ? serve.get_option_no_throw("--" + item.name)
                           : nullptr;
    if (opt == nullptr) {
      throw CLI::ValidationError("--config", path + ": unknown key '" + item.fullname() + "'");
    }
    if (opt->count() > 0) continue;
    if (opt->get_expected_min() == 0) {
      opt->add_result(opt->get_flag_value(item.name, format.to_flag(item)));
    } else {
      opt->add_result(item.inputs);
    }
    opt->run_callback();
  }
}

}  // namespace

int ServeCommand(const ServeConfig& c) {
  SetupLogging(c.log_level);
  auto plan = Check(c);
  if (!plan.ok()) {
    spdlog::error("event=bad_config error={}", Q(plan.status().message()));
    fprintf(stderr, "ax serve: %s\n", plan.status().message().c_str());
    return 2;
  }
  // Signals go to sigwait below, not to the threads started from here on.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto t0 = std::chrono::steady_clock::now();
  auto durable = OpenDurable(c, *plan);
  if (!durable.ok()) {
    fprintf(stderr, "ax serve: %s\n", durable.status().message().c_str());
    return 1;
  }
  DurableScheduler& d = **durable;
  if (Status s = RegisterTargets(d, c.allow_exec); !s.ok()) {
    fprintf(stderr, "ax serve: %s\n", s.message().c_str());
    return 1;
  }
  if (Status s = d.Start(); !s.ok()) {
    spdlog::error("event=start_failed error={}", Q(s.message()));
    fprintf(stderr, "ax serve: %s\n", s.message().c_str());
    return 1;
  }
  auto loaded = d.GetStats();
  Api api(d, ApiOptions{plan->token, c.allow_exec});
  HttpServerOptions ho;
  ho.host = plan->host;
  ho.port = plan->port;
  ho.threads = c.io_threads;
  ho.body_limit = c.body_limit;
  HttpServer http(api, ho);
  if (Status s = http.Start(); !s.ok()) {
    spdlog::error("event=listen_failed error={}", Q(s.message()));
    fprintf(stderr, "ax serve: %s\n", s.message().c_str());
    (void)d.Shutdown(Duration(0));
    return 1;
  }
  auto ready_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  spdlog::info(
      "event=ready listen={}:{} store={} workers={} loaded={} recovered={} ready_ms={} auth={} "
      "exec={}",
      plan->host, http.port(), Q(c.store), c.workers, loaded.loaded, loaded.recovered, ready_ms,
      plan->token.empty() ? "off" : "on", c.allow_exec ? "on" : "off");
  if (!IsLoopbackHost(plan->host)) {
    spdlog::warn("event=exposed listen={} auth={} note={}", Q(c.listen),
                 plan->token.empty() ? "off" : "on",
                 Q("listening beyond loopback as told by --listen"));
  }
  if (Status s = c.port_file.empty() ? Status() : WritePortFile(c.port_file, http.port());
      !s.ok()) {
    spdlog::error("event=port_file_failed error={}", Q(s.message()));
    fprintf(stderr, "ax serve: %s\n", s.message().c_str());
    http.Stop();
    (void)d.Shutdown(Duration(0));
    return 1;
  }
  int sig = 0;
  sigwait(&sigs, &sig);
  spdlog::info("event=draining signal={}", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  // Requests keep being accepted, to be answered 503 (GET /healthz:
  // draining), until the drain is over.
  api.SetDraining();
  ShutdownReport rep = d.Shutdown(plan->drain);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let answers go out
  http.Stop();
  spdlog::info("event=stopped unfinished_runs={}", rep.unfinished.size());
  return 0;
}

void AddServeCommand(CLI::App& app) {
  auto cfg = std::make_shared<ServeConfig>();
  CLI::App* s = app.add_subcommand("serve", "Run the ax daemon: durable jobs over HTTP (SPEC 5)");
  s->add_option("--store", cfg->store, "sqlite:PATH or redis://HOST:PORT/QUEUE (not yet supported)")
      ->capture_default_str();
  s->add_option("--listen", cfg->listen, "HOST:PORT to listen on (loopback unless told otherwise)")
      ->capture_default_str();
  s->add_option("--workers", cfg->workers, "runs at once")->capture_default_str();
  s->add_option("--token-file", cfg->token_file,
                "file holding the bearer token every request but GET /healthz must carry");
  s->add_flag("--allow-exec", cfg->allow_exec, "accept exec targets (argv, no shell)");
  s->add_option("--io-threads", cfg->io_threads, "HTTP I/O threads")->capture_default_str();
  s->add_option("--body-limit", cfg->body_limit, "largest request body in bytes (413 above)")
      ->capture_default_str();
  s->add_option("--window", cfg->window, "load window: jobs due within it are held in memory")
      ->capture_default_str();
  s->add_option("--retention", cfg->retention, "keep finished jobs this long")
      ->capture_default_str();
  s->add_option("--sync", cfg->sync, "SQLite synchronous mode: full (fsync per commit) or normal")
      ->capture_default_str();
  s->add_option("--drain-timeout", cfg->drain_timeout, "how long SIGTERM waits for running jobs")
      ->capture_default_str();
  s->add_option("--timer-slack", cfg->timer_slack,
                "how late a job may start so that close deadlines share a wake-up")
      ->capture_default_str();
  s->add_option("--hand-ahead", cfg->hand_ahead,
                "how long before its deadline a job may go to an idle worker, which sleeps "
                "until then and starts it (0s: off)")
      ->capture_default_str();
  s->add_flag("--pin-workers", cfg->pin_workers, "bind worker i to the i-th allowed CPU");
  s->add_option("--worker-slice", cfg->worker_slice,
                "CPU time slice each worker asks of the kernel (0s: the kernel's own)")
      ->capture_default_str();
  s->add_option("--log-level", cfg->log_level, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str();
  s->add_option("--port-file", cfg->port_file, "write the bound port here once listening");
  auto config_file = std::make_shared<std::string>();
  s->add_option("--config", *config_file, "read these flags from a TOML/INI file (key = value)")
      ->check(CLI::ExistingFile);
  s->callback([cfg, config_file, s] {
    if (!config_file->empty()) ApplyConfigFile(*s, *config_file);
    int rc = ServeCommand(*cfg);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ax::server
