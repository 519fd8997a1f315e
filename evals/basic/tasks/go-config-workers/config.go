package main

// Config is how the job runner is set up.
type Config struct {
	Workers   int
	QueueSize int
}

// Load returns the runner's configuration.
func Load() Config {
	return Config{Workers: 4, QueueSize: 100}
}
