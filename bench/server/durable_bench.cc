// Benchmarks of the durable layer (not tests; figures in docs/daemon.md).
//   ax_bench_durable submit   --db PATH [--n N] [--clients C] [--batch B] [--sync full|normal]
//       durable submits per second: C threads, each submitting batches of B
//       jobs (B = 1: single submits sharing group commits).
//   ax_bench_durable populate --db PATH --n N [--spread-days D]
//       fills PATH with N waiting http jobs due over the next D days.
//   ax_bench_durable window   --db PATH [--far N] [--near K] [--near-secs S]
//       N jobs due over the next 30 days + K due within S seconds; runs them with a no-op
//       handler and reports RSS and how late the near ones fired.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "ax/clock.h"
#include "ax/durable.h"

using namespace std::chrono_literals;

namespace {

std::map<std::string, std::string> Args(int argc, char** argv) {
  std::map<std::string, std::string> m;
  for (int i = 2; i + 1 < argc; i += 2) m[argv[i]] = argv[i + 1];
  return m;
}
long Num(const std::map<std::string, std::string>& a, const char* k, long def) {
  auto it = a.find(k);
  return it == a.end() ? def : std::atol(it->second.c_str());
}
std::string Str(const std::map<std::string, std::string>& a, const char* k, std::string def) {
  auto it = a.find(k);
  return it == a.end() ? def : it->second;
}
long RssKb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}
double Secs(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

ax::DurableJob HttpJob(std::string id, ax::Instant due, ax::Instant now) {
  ax::DurableJob j;
  j.id = std::move(id);
  j.handler = "http";
  j.payload = R"({"method":"POST","url":"http://127.0.0.1:9/x","headers":{},"body":""})";
  j.schedule = R"({"at":"…"})";
  j.at = due;
  j.next_run = due;
  j.created_at = j.updated_at = now;
  return j;
}

std::unique_ptr<ax::DurableScheduler> Durable(const std::string& db, const std::string& sync,
                                              std::atomic<uint64_t>* ran,
                                              std::vector<int64_t>* late, std::mutex* late_mu) {
  auto store = ax::SqliteStore::Open({.path = db, .synchronous = sync});
  if (!store.ok()) {
    fprintf(stderr, "%s\n", store.status().ToString().c_str());
    exit(1);
  }
  ax::DurableOptions o;
  o.store = std::move(store).value();
  o.engine.workers = 8;
  auto d = ax::DurableScheduler::Create(std::move(o)).value();
  (void)d->RegisterHandler(
      "http", [ran, late, late_mu](const ax::RunContext& ctx, std::string_view) {
        if (late != nullptr) {
          int64_t ns = (ax::SystemClock::Get()->Now() - ctx.scheduled_at()).count();
          std::lock_guard lock(*late_mu);
          late->push_back(ns);
        }
        if (ran != nullptr) ran->fetch_add(1);
        return ax::Status();
      });
  return d;
}

int Submit(const std::map<std::string, std::string>& a) {
  std::string db = Str(a, "--db", "/tmp/ax-bench-submit/ax.db");
  std::filesystem::remove_all(std::filesystem::path(db).parent_path());
  long n = Num(a, "--n", 200000), clients = Num(a, "--clients", 64), batch = Num(a, "--batch", 1);
  auto d = Durable(db, Str(a, "--sync", "full"), nullptr, nullptr, nullptr);
  if (!d->Start().ok()) return 1;
  std::atomic<long> next{0};
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (long c = 0; c < clients; ++c) {
    ts.emplace_back([&] {
      for (;;) {
        long first = next.fetch_add(batch);
        if (first >= n) return;
        std::vector<ax::DurableJob> jobs;
        for (long i = first; i < std::min(n, first + batch); ++i) {
          ax::DurableJob j;
          j.id = "s" + std::to_string(i);
          j.handler = "http";
          j.payload = "{}";
          j.delay = 2h;  // beyond the window: stored, not loaded
          jobs.push_back(std::move(j));
        }
        auto r = d->Submit(std::move(jobs));
        if (!r.ok()) {
          fprintf(stderr, "submit: %s\n", r.status().ToString().c_str());
          std::exit(1);
        }
      }
    });
  }
  for (auto& t : ts) t.join();
  double s = Secs(t0);
  auto st = d->GetStats().store;
  printf(
      "{\"bench\":\"durable_submit\",\"n\":%ld,\"clients\":%ld,\"batch\":%ld,\"sync\":\"%s\","
      "\"seconds\":%.3f,\"jobs_per_s\":%.0f,\"commits\":%llu,\"avg_commit_latency_ms\":%.3f}\n",
      n, clients, batch, Str(a, "--sync", "full").c_str(), s, n / s,
      static_cast<unsigned long long>(st.commits),
      st.commit_latency_count ? st.commit_latency_sum_ns / 1e6 / st.commit_latency_count : 0.0);
  (void)d->Shutdown(1s);
  return 0;
}

int Populate(const std::map<std::string, std::string>& a) {
  std::string db = Str(a, "--db", "/tmp/ax-bench-populate/ax.db");
  std::filesystem::remove_all(std::filesystem::path(db).parent_path());
  long n = Num(a, "--n", 1000000), days = Num(a, "--spread-days", 30);
  long near_secs = Num(a, "--start-secs", 7200);
  auto store = ax::SqliteStore::Open({.path = db, .synchronous = "normal"}).value();
  ax::Instant now = ax::SystemClock::Get()->Now();
  auto t0 = std::chrono::steady_clock::now();
  std::vector<ax::DurableJob> batch;
  for (long i = 0; i < n; ++i) {
    ax::Duration off =
        std::chrono::seconds(near_secs) +
        std::chrono::seconds(static_cast<int64_t>(i) * days * 86400 / std::max(1L, n));
    batch.push_back(HttpJob("p" + std::to_string(i), now + off, now));
    if (batch.size() == 10000 || i + 1 == n) {
      if (!store->Insert(std::move(batch)).ok()) return 1;
      batch.clear();
    }
  }
  printf("{\"bench\":\"populate\",\"n\":%ld,\"seconds\":%.2f}\n", n, Secs(t0));
  return 0;
}

int Window(const std::map<std::string, std::string>& a) {
  std::string db = Str(a, "--db", "/tmp/ax-bench-window/ax.db");
  std::filesystem::remove_all(std::filesystem::path(db).parent_path());
  long far = Num(a, "--far", 1000000), near = Num(a, "--near", 10000);
  long near_secs = Num(a, "--near-secs", 60);
  {
    auto store = ax::SqliteStore::Open({.path = db, .synchronous = "normal"}).value();
    ax::Instant now = ax::SystemClock::Get()->Now();
    std::vector<ax::DurableJob> batch;
    for (long i = 0; i < far; ++i) {
      // Spread evenly over the next 30 days, all beyond the 1 h window.
      auto in = std::chrono::seconds(static_cast<int64_t>(i) * 30 * 86400 / std::max(1L, far));
      batch.push_back(HttpJob("far" + std::to_string(i), now + 2h + in, now));
      if (batch.size() == 10000) {
        if (!store->Insert(std::move(batch)).ok()) return 1;
        batch.clear();
      }
    }
    if (!batch.empty() && !store->Insert(std::move(batch)).ok()) return 1;
  }
  long rss0 = RssKb();
  std::atomic<uint64_t> ran{0};
  std::vector<int64_t> late;
  std::mutex late_mu;
  auto d = Durable(db, "normal", &ran, &late, &late_mu);
  auto t0 = std::chrono::steady_clock::now();
  if (!d->Start().ok()) return 1;
  double start_s = Secs(t0);
  long rss_started = RssKb();
  ax::Instant now = d->engine().Now();
  std::vector<ax::DurableJob> batch;
  for (long i = 0; i < near; ++i) {
    ax::DurableJob j;
    j.id = "near" + std::to_string(i);
    j.handler = "http";
    j.payload = "{}";
    j.at = now + 2s + std::chrono::milliseconds(i * near_secs * 1000 / std::max(1L, near));
    batch.push_back(std::move(j));
    if (batch.size() == 1000) {
      if (!d->Submit(std::move(batch)).ok()) return 1;
      batch.clear();
    }
  }
  if (!batch.empty() && !d->Submit(std::move(batch)).ok()) return 1;
  long rss_peak = RssKb();
  while (ran.load() < static_cast<uint64_t>(near) && Secs(t0) < near_secs + 60) {
    std::this_thread::sleep_for(50ms);
    rss_peak = std::max(rss_peak, RssKb());
  }
  std::sort(late.begin(), late.end());
  auto q = [&](double p) {
    return late.empty()
               ? 0.0
               : late[std::min(late.size() - 1, static_cast<size_t>(p * late.size()))] / 1e6;
  };
  auto st = d->GetStats();
  printf(
      "{\"bench\":\"window\",\"far\":%ld,\"near\":%ld,\"near_secs\":%ld,\"start_s\":%.3f,"
      "\"loaded\":%llu,\"ran\":%llu,\"rss_before_kb\":%ld,\"rss_started_kb\":%ld,"
      "\"rss_peak_kb\":%ld,\"late_p50_ms\":%.3f,\"late_p99_ms\":%.3f,\"late_max_ms\":%.3f}\n",
      far, near, near_secs, start_s, static_cast<unsigned long long>(st.loaded),
      static_cast<unsigned long long>(ran.load()), rss0, rss_started, rss_peak, q(0.5), q(0.99),
      late.empty() ? 0.0 : late.back() / 1e6);
  (void)d->Shutdown(1s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s submit|populate|window [--flag value]...\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  auto a = Args(argc, argv);
  if (mode == "submit") return Submit(a);
  if (mode == "populate") return Populate(a);
  if (mode == "window") return Window(a);
  fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
