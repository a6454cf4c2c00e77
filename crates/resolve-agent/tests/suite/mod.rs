mod support;

mod soft_requirement;
mod tool_calls;
mod transport;
mod wire;
