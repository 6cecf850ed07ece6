#![allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision

use rmcp::model::LoggingLevel;

use super::LogLevels;

#[test]
fn the_servers_send_at_the_most_verbose_level_any_client_chose() {
    let levels = LogLevels::default();
    assert_eq!(levels.effective(), None);
    assert_eq!(levels.choose(1, LoggingLevel::Error), LoggingLevel::Error);
    assert_eq!(levels.choose(2, LoggingLevel::Debug), LoggingLevel::Debug);
    // A later, quieter choice does not silence the client that asked for debug.
    assert_eq!(levels.choose(3, LoggingLevel::Warning), LoggingLevel::Debug);
    assert_eq!(levels.choose(2, LoggingLevel::Notice), LoggingLevel::Notice);
    assert_eq!(levels.effective(), Some(LoggingLevel::Notice));
}

#[test]
fn each_client_gets_only_what_it_asked_for() {
    let levels = LogLevels::default();
    levels.choose(1, LoggingLevel::Warning);
    levels.choose(2, LoggingLevel::Debug);
    assert!(!levels.passes(1, LoggingLevel::Info));
    assert!(levels.passes(1, LoggingLevel::Warning));
    assert!(levels.passes(1, LoggingLevel::Emergency));
    assert!(levels.passes(2, LoggingLevel::Debug));
    // A client that chose nothing gets what the server sends.
    assert!(levels.passes(7, LoggingLevel::Debug));
}

#[test]
fn a_client_that_leaves_gives_its_level_back() {
    let levels = LogLevels::default();
    levels.choose(1, LoggingLevel::Warning);
    levels.choose(2, LoggingLevel::Debug);
    // The debug client leaves: the servers go back to warning.
    assert_eq!(levels.forget(2), Some(LoggingLevel::Warning));
    assert!(levels.passes(2, LoggingLevel::Debug));
    // Unknown client, or no change: nothing to send.
    assert_eq!(levels.forget(9), None);
    levels.choose(3, LoggingLevel::Error);
    assert_eq!(levels.forget(3), None);
    // The last one leaves: the servers keep the level (MCP cannot unset it).
    assert_eq!(levels.forget(1), None);
    assert_eq!(levels.effective(), None);
}
