pub mod exec_shell;
pub mod exec_shell_cancel;
pub mod exec_shell_interact;
pub mod exec_shell_wait;
pub mod shell_jobs;
pub mod task_shell_start;
pub mod task_shell_wait;
