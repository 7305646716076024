// MemoryStore: records in a std::map under one mutex.
#include <algorithm>
#include <map>
#include <mutex>

#include "ax/store.h"

namespace ax {

struct MemoryStore::Impl {
  mutable std::mutex mu;
  std::map<std::string, DurableJob, std::less<>> jobs;
  StoreStats stats;
};

MemoryStore::MemoryStore() : impl_(std::make_unique<Impl>()) {}
MemoryStore::~MemoryStore() = default;

void MemoryStore::InsertAsync(std::vector<DurableJob> jobs, InsertCallback done) {
  if (Status s = CheckBatchIds(jobs); !s.ok()) {
    done(std::move(s));
    return;
  }
  std::vector<InsertOutcome> out;
  {
    std::lock_guard lock(impl_->mu);
    out.reserve(jobs.size());
    for (auto& j : jobs) {
      auto it = impl_->jobs.find(j.id);
      if (it != impl_->jobs.end() && !IsTerminal(it->second.state)) {
        out.push_back({false, it->second});
        continue;
      }
      impl_->jobs[j.id] = j;
      out.push_back({true, std::move(j)});
      ++impl_->stats.jobs_inserted;
    }
    ++impl_->stats.commits;
    ++impl_->stats.writes;
  }
  done(std::move(out));
}

void MemoryStore::PutAsync(std::vector<DurableJob> records, DoneCallback done) {
  {
    std::lock_guard lock(impl_->mu);
    for (auto& r : records) impl_->jobs[r.id] = std::move(r);
    ++impl_->stats.commits;
    ++impl_->stats.writes;
  }
  if (done) done(Status());
}

Result<DurableJob> MemoryStore::Mutate(std::string_view id, Mutation fn) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->jobs.find(id);
  if (it == impl_->jobs.end()) return Status::NotFound("no job \"" + std::string(id) + "\"");
  DurableJob copy = it->second;
  AX_RETURN_IF_ERROR(fn(copy));
  it->second = copy;
  ++impl_->stats.commits;
  ++impl_->stats.writes;
  return copy;
}

Result<size_t> MemoryStore::Purge(Instant before) {
  std::lock_guard lock(impl_->mu);
  size_t n = 0;
  for (auto it = impl_->jobs.begin(); it != impl_->jobs.end();) {
    const DurableJob& j = it->second;
    if (IsTerminal(j.state) && j.finished_at && *j.finished_at < before) {
      it = impl_->jobs.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

Result<DurableJob> MemoryStore::Get(std::string_view id) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->jobs.find(id);
  if (it == impl_->jobs.end()) return Status::NotFound("no job \"" + std::string(id) + "\"");
  return it->second;
}

Result<std::vector<DurableJob>> MemoryStore::List(const ListQuery& q) {
  std::lock_guard lock(impl_->mu);
  std::vector<DurableJob> out;
  for (auto it = impl_->jobs.upper_bound(q.after_id); it != impl_->jobs.end(); ++it) {
    if (out.size() >= q.limit) break;
    if (q.state && it->second.state != *q.state) continue;
    out.push_back(it->second);
  }
  return out;
}

Result<std::vector<DurableJob>> MemoryStore::LoadDue(std::optional<Instant> from, Instant before) {
  std::lock_guard lock(impl_->mu);
  std::vector<DurableJob> out;
  for (const auto& [id, j] : impl_->jobs) {
    if (j.state != JobState::kWaiting && j.state != JobState::kRunning) continue;
    bool due = j.next_run && *j.next_run < before && (!from || *j.next_run >= *from);
    if (due || (!from && j.state == JobState::kRunning)) out.push_back(j);
  }
  std::stable_sort(out.begin(), out.end(), [](const DurableJob& a, const DurableJob& b) {
    return a.next_run.value_or(kInstantMin) < b.next_run.value_or(kInstantMin);
  });
  return out;
}

Result<std::vector<DurableJob>> MemoryStore::Orphans() {
  std::lock_guard lock(impl_->mu);
  std::vector<DurableJob> out;
  for (const auto& [id, j] : impl_->jobs) {
    if (j.parent.empty() || j.state != JobState::kWaiting || j.next_run) continue;
    auto p = impl_->jobs.find(j.parent);
    if (p == impl_->jobs.end() || IsTerminal(p->second.state)) out.push_back(j);
  }
  return out;
}

Result<std::vector<DurableJob>> MemoryStore::Children(std::string_view parent) {
  std::lock_guard lock(impl_->mu);
  std::vector<DurableJob> out;
  for (const auto& [id, j] : impl_->jobs) {
    if (j.parent == parent && j.state == JobState::kWaiting && !j.next_run) out.push_back(j);
  }
  return out;
}

Result<std::vector<uint64_t>> MemoryStore::CountByState() {
  std::lock_guard lock(impl_->mu);
  std::vector<uint64_t> n(static_cast<size_t>(JobState::kDead) + 1);
  for (const auto& [id, j] : impl_->jobs) ++n[static_cast<size_t>(j.state)];
  return n;
}

StoreStats MemoryStore::GetStats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

}  // namespace ax
