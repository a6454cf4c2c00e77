mod config;

fn main() {
    let config = config::Config::load("app.conf");
    let listener = std::net::TcpListener::bind(("127.0.0.1", config.port())).unwrap();
    println!("listening on {}", listener.local_addr().unwrap());
}
