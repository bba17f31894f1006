package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"masthead/internal/seed"
)

func init() {
	commands["seed"] = command{summary: seedSummary, run: runSeed}
}

const seedSummary = "load the demo data (once); --publications N for benchmark-sized sets"

func runSeed(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	fs := newFlags("seed", seedSummary)
	owner := ownerURLFlag(fs)
	pubs := fs.Int("publications", 0, "publications per project (0: the hand-made demo set of 36)")
	media := fs.String("media-dir", envOr("MASTHEAD_STORAGE_DIR", ""), "folder of bucket media, where generated images go (env MASTHEAD_STORAGE_DIR)")
	bcryptCost := bcryptCostFlag(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("set --owner-url or DATABASE_OWNER_URL")
	}
	cost, err := bcryptCost()
	if err != nil {
		return err
	}
	sum, err := seed.Run(ctx, *owner, seed.Options{
		Publications: *pubs, Password: demoPassword(), BcryptCost: cost, MediaDir: *media, Log: log,
	})
	if err != nil {
		return err
	}
	printSeedSummary(stdout, sum)
	return nil
}

func demoPassword() string { return envOr("MASTHEAD_DEMO_PASSWORD", seed.DefaultPassword) }

func printSeedSummary(w io.Writer, s seed.Summary) {
	if s.Skipped {
		fmt.Fprintln(w, "Demo data:   already there, left as it is")
		return
	}
	fmt.Fprintf(w, "Demo data:   %d projects, %d users, %d publications, %d media, %d promos, %d reviews, %d status events in %s\n",
		s.Projects, s.Users, s.Publications, s.Media, s.Promos, s.Reviews, s.StatusEvents, s.Duration.Round(1e6))
}
