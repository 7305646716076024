// libFuzzer target: the HTTP API (SPEC 5.3) must answer every request once,
// with a status and a JSON error or document, and never crash, hang or throw.
//
// Input: up to 8 requests separated by NUL bytes, each "METHOD TARGET" on
// its first line and the body after it, run in order against a daemon core
// (a DurableScheduler over a memory store, no HTTP), so that later requests
// find the jobs earlier ones made. The "http" and "exec" handlers are
// registered as no-ops: jobs are accepted and may fire. A core takes about
// 20 ms to start under the sanitizers, so one serves 256 inputs: a finding
// may need the inputs before it to reproduce.
#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ax/durable.h"

#include "../fuzz_check.h"
#include "server/api.h"

namespace {

constexpr int kMaxRequests = 8;
constexpr int kInputsPerCore = 256;

struct Core {
  std::unique_ptr<ax::DurableScheduler> d;
  std::unique_ptr<ax::server::Api> api;

  Core() {
    ax::DurableOptions o;
    o.store = std::make_shared<ax::MemoryStore>();
    o.engine.workers = 1;
    auto created = ax::DurableScheduler::Create(std::move(o));
    FUZZ_CHECK(created.ok());
    d = std::move(*created);
    const ax::Handler noop = [](const ax::RunContext&, std::string_view) { return ax::Status(); };
    FUZZ_CHECK(d->RegisterHandler("http", noop).ok() && d->RegisterHandler("exec", noop).ok());
    FUZZ_CHECK(d->Start().ok());
    api = std::make_unique<ax::server::Api>(*d, ax::server::ApiOptions{"", true});
  }
  ~Core() { (void)d->Shutdown(std::chrono::seconds(1)); }
};

ax::server::ApiRequest Request(std::string_view text) {
  ax::server::ApiRequest r;
  const size_t eol = text.find('\n');
  const std::string_view line = text.substr(0, eol);
  const size_t space = line.find(' ');
  r.method = std::string(line.substr(0, space));
  r.target = space == std::string_view::npos ? "" : std::string(line.substr(space + 1));
  r.body = eol == std::string_view::npos ? "" : std::string(text.substr(eol + 1));
  return r;
}

void CheckAnswer(const ax::server::ApiResponse& r) {
  FUZZ_CHECK(r.status >= 200 && r.status < 600);
  if (r.content_type == "application/json") {
    const nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
    FUZZ_CHECK(!j.is_discarded());
    if (r.status >= 400) {
      const auto e = j.find("error");
      FUZZ_CHECK(e != j.end() && e->is_object() &&
                 e->value("message", nlohmann::json()).is_string());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  static std::unique_ptr<Core> core;
  static uint64_t inputs = 0;
  if (inputs++ % kInputsPerCore == 0) {
    core.reset();
    core = std::make_unique<Core>();
  }
  ax::server::Api& api = *core->api;

  std::string_view in(reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < kMaxRequests && !in.empty(); ++i) {
    const size_t end = in.find('\0');
    const ax::server::ApiRequest req = Request(in.substr(0, end));
    in = end == std::string_view::npos ? "" : in.substr(end + 1);
    // POST /v1/jobs answers from the store's thread, the rest at once.
    auto answer = std::make_shared<std::promise<ax::server::ApiResponse>>();
    auto calls = std::make_shared<std::atomic<int>>(0);
    api.Handle(req, [answer, calls](ax::server::ApiResponse r) {
      FUZZ_CHECK(calls->fetch_add(1) == 0);
      answer->set_value(std::move(r));
    });
    CheckAnswer(answer->get_future().get());
  }
  return 0;
}
