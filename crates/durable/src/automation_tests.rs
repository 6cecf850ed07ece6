use std::sync::Arc;

use super::*;
use crate::{ManualClock, TaskFilter};

/// 2026-01-05T08:59:30Z, a Monday.
const MONDAY_0859_30: i64 = 1_767_603_570_000;
const MINUTE: i64 = 60_000;

fn store(start: i64) -> (tempfile::TempDir, Store, Arc<ManualClock>) {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(start));
    let s = Store::open_with_clock(dir.path(), clock.clone()).unwrap();
    (dir, s, clock)
}

fn every_minute() -> NewAutomation {
    NewAutomation {
        name: "triage".into(),
        prompt: "triage new issues".into(),
        schedule: "* * * * *".into(),
        ..Default::default()
    }
}

#[test]
fn due_every_minute_enqueues_one_task_per_due_time() {
    let (_d, s, clock) = store(MONDAY_0859_30);
    let a = s.create_automation(&every_minute()).unwrap();
    assert_eq!(a.next_due.as_deref(), Some("2026-01-05T09:00:00.000Z"));
    // Tick every 10 s for five minutes.
    let mut enqueued = 0;
    for _ in 0..30 {
        clock.advance_ms(10_000);
        let r = s.tick_automations(30_000).unwrap();
        assert!(r.missed.is_empty(), "{r:?}");
        enqueued += r.enqueued.len();
    }
    assert_eq!(enqueued, 5);
    let tasks = s.list_tasks(&TaskFilter::default()).unwrap();
    assert_eq!(tasks.len(), 5);
    assert!(tasks.iter().all(|t| t.automation_id.as_deref() == Some("auto-1") && t.prompt == "triage new issues"));
    let runs = s.automation_runs("triage", 10).unwrap();
    assert_eq!(runs.len(), 5);
    assert_eq!(runs[0].outcome, RunOutcome::Enqueued);
}

#[test]
fn downtime_is_reported_as_missed_not_fired_in_a_burst() {
    let (_d, s, clock) = store(MONDAY_0859_30);
    s.create_automation(&every_minute()).unwrap();
    clock.advance_ms(60 * MINUTE); // quiver was down for an hour
    let r = s.tick_automations(30_000).unwrap();
    assert_eq!(r.enqueued.len(), 1, "only the current due time runs: {r:?}");
    assert_eq!(r.missed.len(), 1);
    assert_eq!(r.missed[0].1, 59);
    assert_eq!(s.list_tasks(&TaskFilter::default()).unwrap().len(), 1);
    let runs = s.automation_runs("auto-1", 10).unwrap();
    assert!(runs.iter().any(|run| run.outcome == RunOutcome::Missed && run.missed_count == 59));
    // The schedule moved on: the next tick a second later does nothing.
    clock.advance_ms(1000);
    assert_eq!(s.tick_automations(30_000).unwrap(), TickReport::default());
}

#[test]
fn schedules_follow_their_time_zone() {
    // 09:00 on weekdays in New York is 14:00 UTC in January.
    let (_d, s, _c) = store(MONDAY_0859_30);
    let a = s
        .create_automation(&NewAutomation {
            schedule: "0 9 * * 1-5".into(),
            tz: Some("America/New_York".into()),
            ..every_minute()
        })
        .unwrap();
    assert_eq!(a.next_due.as_deref(), Some("2026-01-05T14:00:00.000Z"));
    assert!(!a.describes.is_empty());
}

#[test]
fn pause_resume_update_delete_and_run_now() {
    let (_d, s, clock) = store(MONDAY_0859_30);
    s.create_automation(&every_minute()).unwrap();
    let p = s.pause_automation("triage").unwrap();
    assert_eq!((p.state, p.next_due.clone()), (AutomationState::Paused, None));
    clock.advance_ms(10 * MINUTE);
    assert_eq!(s.tick_automations(30_000).unwrap(), TickReport::default());
    let r = s.resume_automation("auto-1").unwrap();
    assert_eq!(r.state, AutomationState::Active);
    assert!(s.tick_automations(30_000).unwrap().missed.is_empty(), "paused time is not missed time");
    let u = s
        .update_automation("triage", &AutomationPatch { schedule: Some("@hourly".into()), ..Default::default() })
        .unwrap();
    assert_eq!(u.schedule, "@hourly");
    let t = s.run_automation_now("triage").unwrap();
    assert_eq!(t.automation_id.as_deref(), Some("auto-1"));
    assert_eq!(s.automation_runs("triage", 5).unwrap()[0].outcome, RunOutcome::Manual);
    s.delete_automation("triage").unwrap();
    assert!(s.automation("triage").unwrap_err().to_string().contains("no automation"));
    assert_eq!(s.task(&t.id).unwrap().prompt, "triage new issues", "tasks outlive their automation");
}

#[test]
fn bad_schedules_zones_and_names_are_precise_errors() {
    let (_d, s, _c) = store(MONDAY_0859_30);
    let e =
        s.create_automation(&NewAutomation { schedule: "every day".into(), ..every_minute() }).unwrap_err().to_string();
    assert!(e.contains("invalid schedule 'every day'") && e.contains("five cron fields"), "{e}");
    let e = s
        .create_automation(&NewAutomation { tz: Some("Mars/Olympus".into()), ..every_minute() })
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown time zone 'Mars/Olympus'"), "{e}");
    s.create_automation(&every_minute()).unwrap();
    let e = s.create_automation(&every_minute()).unwrap_err().to_string();
    assert!(e.contains("exists already (auto-1)"), "{e}");
    assert!(s.list_automations().unwrap().len() == 1);
}
