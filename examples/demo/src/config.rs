use std::collections::HashMap;
use std::fs;

pub struct Config {
    values: HashMap<String, String>,
}

impl Config {
    pub fn load(path: &str) -> Config {
        let text = fs::read_to_string(path).unwrap();
        let mut values = HashMap::new();
        for line in text.lines() {
            let (key, value) = line.split_once('=').unwrap();
            values.insert(key.trim().to_string(), value.trim().to_string());
        }
        Config { values }
    }

    pub fn port(&self) -> u16 {
        self.values.get("port").unwrap().parse().unwrap()
    }
}
