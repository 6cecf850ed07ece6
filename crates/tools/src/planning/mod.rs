pub mod checklist;
pub mod checklist_add;
pub mod checklist_list;
pub mod checklist_update;
pub mod checklist_write;
pub mod note;
pub mod update_plan;
