// The HTTP API of `ax serve` (SPEC 5.3), independent of the transport: a
// request (method, target, Authorization, body) in, a response out through
// a callback (POST /v1/jobs answers once the jobs are committed, from the
// store's thread; everything else answers before Handle returns).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "ax/durable.h"

namespace ax::server {

struct ApiRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query: "/v1/jobs?state=waiting"
  std::string authorization;
  std::string body;
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string allow;  // for 405
};

struct ApiOptions {
  std::string token;  // empty: no authentication
  bool allow_exec = false;
};

class Api {
 public:
  Api(DurableScheduler& d, ApiOptions options);

  using Respond = std::function<void(ApiResponse)>;
  void Handle(const ApiRequest& req, Respond respond);

  // From now on every request but GET /healthz gets 503.
  void SetDraining() { draining_.store(true); }
  bool draining() const { return draining_.load(); }

  // Counts a response (the transport calls this for 413 and others it makes).
  void CountResponse(int status);

  // An error response: {"error": {"code", "message", "field"}}.
  static ApiResponse Error(int http_status, std::string_view code, std::string_view message);
  static ApiResponse FromStatus(const Status& s);

 private:
  void PostJobs(const ApiRequest& req, const Respond& respond);
  ApiResponse GetJob(const std::string& id);
  ApiResponse ListJobs(std::string_view query);
  ApiResponse ChangeJob(const std::string& id, const Status& s);
  ApiResponse Patch(const std::string& id, const std::string& body);
  ApiResponse Stats();
  ApiResponse Metrics();

  DurableScheduler& d_;
  ApiOptions options_;
  std::atomic<bool> draining_{false};
  std::mutex counts_mu_;
  std::map<int, uint64_t> responses_;  // guarded by counts_mu_
};

}  // namespace ax::server
