// JobStore's synchronous helpers, the batch check and the state names.
#include "ax/store.h"

#include <future>
#include <string>
#include <unordered_map>

namespace ax {

Result<std::vector<InsertOutcome>> JobStore::Insert(std::vector<DurableJob> jobs) {
  std::promise<Result<std::vector<InsertOutcome>>> p;
  auto f = p.get_future();
  InsertAsync(std::move(jobs),
              [&p](Result<std::vector<InsertOutcome>> r) { p.set_value(std::move(r)); });
  return f.get();
}

Status JobStore::Put(std::vector<DurableJob> records) {
  std::promise<Status> p;
  auto f = p.get_future();
  PutAsync(std::move(records), [&p](Status s) { p.set_value(std::move(s)); });
  return f.get();
}

Status CheckBatchIds(const std::vector<DurableJob>& batch) {
  if (batch.size() < 2) return Status();
  std::unordered_map<std::string_view, size_t> first_of;  // id -> its index
  for (size_t i = 0; i < batch.size(); ++i) {
    if (auto [it, fresh] = first_of.emplace(batch[i].id, i); !fresh) {
      return Status::InvalidArgument("jobs[" + std::to_string(i) + "].id: \"" + batch[i].id +
                                     "\" appears twice in the batch (also jobs[" +
                                     std::to_string(it->second) + "])");
    }
  }
  return Status();
}

std::string_view JobStateText(JobState s) { return JobStateName(s); }

std::optional<JobState> ParseJobState(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(JobState::kDead); ++i) {
    auto s = static_cast<JobState>(i);
    if (JobStateText(s) == name) return s;
  }
  return std::nullopt;
}

}  // namespace ax
