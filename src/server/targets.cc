// http and exec targets.
#include "server/targets.h"

#include <chrono>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ax/instant.h"

#include "server/http_client.h"
#include "server/job_body.h"

extern char** environ;

namespace ax::server {

Status RunHttpTarget(const RunContext& ctx, std::string_view payload) {
  auto spec = ParseHttpTarget(payload);
  if (!spec.ok()) return spec.status();
  ClientRequest req;
  req.method = spec->method;
  req.host = spec->host;
  req.port = spec->port;
  req.target = spec->path;
  req.headers = spec->headers;
  req.headers.emplace_back("Ax-Job-Id", std::string(ctx.key()));
  req.headers.emplace_back("Ax-Attempt", std::to_string(ctx.attempt()));
  req.headers.emplace_back("Ax-Scheduled-At", FormatInstant(ctx.scheduled_at()));
  req.body = std::move(spec->body);
  auto res = HttpDo(req, spec->timeout, ctx.stop_token());
  if (!res.ok()) return res.status();
  if (res->status < 200 || res->status > 299) {
    return Status::Unavailable("http " + std::to_string(res->status) + " from " + spec->url);
  }
  return Status();
}

Status RunExecTarget(const RunContext& ctx, std::string_view payload) {
  auto spec = ParseExecTarget(payload);
  if (!spec.ok()) return spec.status();
  std::vector<char*> argv;
  for (auto& a : spec->argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_store = {"AX_JOB_ID=" + std::string(ctx.key()),
                                        "AX_ATTEMPT=" + std::to_string(ctx.attempt()),
                                        "AX_SCHEDULED_AT=" + FormatInstant(ctx.scheduled_at())};
  std::vector<char*> envp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (strncmp(*e, "AX_", 3) != 0) envp.push_back(*e);
  }
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  // Nothing else of the daemon's: Asio's sockets are not close-on-exec, and a
  // command that outlived a restart held the listening port.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  // A process group of its own, so that a timeout or a stop ends what the
  // command started too (`sh -c 'a | b'`, a script's children).
  // And the signals as a fresh process has them: the daemon's threads block
  // SIGTERM and SIGINT (sigwait takes them) and ignore SIGPIPE, and a child
  // would inherit both (a `kill` in the command could not stop what it
  // started).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return Status::Unavailable("exec " + spec->argv[0] + ": " + strerror(rc));
  auto deadline = std::chrono::steady_clock::now() + spec->timeout;
  auto nap = std::chrono::milliseconds(1);
  for (;;) {
    int st = 0;
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) {
      if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return Status();
      if (WIFEXITED(st)) {
        return Status::Unavailable("exec " + spec->argv[0] + ": exit status " +
                                   std::to_string(WEXITSTATUS(st)));
      }
      return Status::Unavailable("exec " + spec->argv[0] + ": killed by signal " +
                                 std::to_string(WTERMSIG(st)));
    }
    bool timed_out = std::chrono::steady_clock::now() >= deadline;
    if (timed_out || ctx.stop_requested()) {
      kill(-pid, SIGKILL);
      waitpid(pid, &st, 0);
      if (timed_out) return Status::DeadlineExceeded("exec " + spec->argv[0] + ": timed out");
      return Status::Cancelled("exec " + spec->argv[0] + ": stopped");
    }
    std::this_thread::sleep_for(nap);
    nap = std::min<std::chrono::milliseconds>(nap * 2, std::chrono::milliseconds(50));
  }
}

Status RegisterTargets(DurableScheduler& d, bool allow_exec) {
  AX_RETURN_IF_ERROR(d.RegisterHandler("http", RunHttpTarget));
  if (allow_exec) return d.RegisterHandler("exec", RunExecTarget);
  return d.RegisterHandler("exec", [](const RunContext&, std::string_view) {
    return Status::InvalidState("exec targets are disabled: start ax serve with --allow-exec");
  });
}

}  // namespace ax::server
