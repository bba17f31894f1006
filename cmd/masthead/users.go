package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"golang.org/x/crypto/bcrypt"

	"masthead/internal/config"
	"masthead/internal/seed"
)

func init() {
	commands["users"] = command{summary: "manage accounts: users create | list | add | role | password | disable | enable", run: runUsers}
}

const usersUsage = `usage: masthead users <create|list|add|role|password|disable|enable> [flags]

  create    create a confirmed account, optionally with a role in a project
  list      list accounts with their projects and roles
  add       add an existing account to another project with a role
  role      change an account's role in a project (a project keeps at least one owner)
  password  set a new password for an account and sign it out everywhere
  disable   stop an account from signing in and end its sessions (its work stays)
  enable    let a disabled account sign in again

Run 'masthead users <command> -h' for its flags`

func runUsers(ctx context.Context, args []string, stdout io.Writer, _ *slog.Logger) error {
	if len(args) == 0 {
		return errors.New(usersUsage)
	}
	switch args[0] {
	case "create":
		return usersCreate(ctx, args[1:], stdout)
	case "list":
		return usersList(ctx, args[1:], stdout)
	case "add", "role":
		return usersMembership(ctx, args[0], args[1:], stdout)
	case "password":
		return usersPassword(ctx, args[1:], os.Stdin, stdout)
	case "disable", "enable":
		return usersDisable(ctx, args[0], args[1:], stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usersUsage)
		return flag.ErrHelp
	}
	return fmt.Errorf("unknown users command %q\n\n%s", args[0], usersUsage)
}

func usersCreate(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("users create", "create a confirmed account, optionally with a role in a project")
	owner := ownerURLFlag(fs)
	email := fs.String("email", "", "the account's email (required)")
	password := fs.String("password", "", "the account's password, at least --password-min-length characters (required)")
	minLength := passwordMinLengthFlag(fs)
	bcryptCost := bcryptCostFlag(fs)
	project := fs.String("project", "", "slug of a project to join (optional)")
	role := fs.String("role", "viewer", "role in that project: "+strings.Join(seed.Roles, ", "))
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("set --owner-url or DATABASE_OWNER_URL")
	}
	minLen, err := minLength()
	if err != nil {
		return err
	}
	cost, err := bcryptCost()
	if err != nil {
		return err
	}
	id, err := seed.CreateUser(ctx, *owner, *email, *password, minLen, cost, *project, *role)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created %s (%s)\n", *email, id)
	return nil
}

func usersList(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("users list", "list accounts with their projects and roles")
	owner := ownerURLFlag(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("set --owner-url or DATABASE_OWNER_URL")
	}
	users, err := seed.ListUsers(ctx, *owner)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EMAIL\tNAME\tPROJECTS")
	for _, u := range users {
		var ms []string
		for _, m := range u.Memberships {
			ms = append(ms, m.Project+":"+m.Role)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Email, u.Name, strings.Join(ms, " "))
	}
	return tw.Flush()
}

// passwordMinLengthFlag adds --password-min-length, whose default is the service's
// MASTHEAD_PASSWORD_MIN_LENGTH, so an operator sets no password the service would refuse a
// person. The returned func reads it once the flags are parsed, in the bounds the service's
// configuration allows.
func passwordMinLengthFlag(fs *flag.FlagSet) func() (int, error) {
	return boundedIntFlag(fs, "password-min-length", "MASTHEAD_PASSWORD_MIN_LENGTH", seed.DefaultPasswordMinLength, 6, 72,
		"the shortest password accepted")
}

// bcryptCostFlag adds --bcrypt-cost, whose default is the service's MASTHEAD_BCRYPT_COST, so a
// password hashed here costs what the operator chose for every hash, and a sign-in to the
// account takes as long as the service's check of an unknown email, which compares a hash of
// that cost. The returned func reads it once the flags are parsed, in the bounds the service's
// configuration allows (bcrypt's own).
func bcryptCostFlag(fs *flag.FlagSet) func() (int, error) {
	return boundedIntFlag(fs, "bcrypt-cost", "MASTHEAD_BCRYPT_COST", config.Default().BcryptCost, bcrypt.MinCost, bcrypt.MaxCost,
		"bcrypt cost of the password hashes made")
}

// boundedIntFlag adds --name, defaulting to the environment variable env or else def, and
// returns the func that reads it once the flags are parsed: a number from lo to hi, or an error
// naming the flag, the variable and the bounds.
func boundedIntFlag(fs *flag.FlagSet, name, env string, def, lo, hi int, usage string) func() (int, error) {
	v := fs.String(name, envOr(env, strconv.Itoa(def)), fmt.Sprintf("%s, %d to %d (env %s)", usage, lo, hi, env))
	return func() (int, error) {
		n, err := strconv.Atoi(*v)
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("--%s (%s) must be a number from %d to %d, not %q", name, env, lo, hi, *v)
		}
		return n, nil
	}
}

// usersMembership is `users add` (join another project) and `users role` (change a role).
func usersMembership(ctx context.Context, cmd string, args []string, stdout io.Writer) error {
	summary := "add an existing account to another project with a role"
	if cmd == "role" {
		summary = "change an account's role in a project"
	}
	fs := newFlags("users "+cmd, summary)
	owner := ownerURLFlag(fs)
	email := fs.String("email", "", "the account's email (required)")
	project := fs.String("project", "", "the project's slug (required)")
	role := fs.String("role", "", "the role: "+strings.Join(seed.Roles, ", ")+" (required)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("set --owner-url or DATABASE_OWNER_URL")
	}
	if *email == "" || *project == "" || *role == "" {
		return fmt.Errorf("users %s needs --email, --project and --role", cmd)
	}
	if cmd == "add" {
		if err := seed.AddMember(ctx, *owner, *email, *project, *role); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s joined %s as %s\n", *email, *project, *role)
		return nil
	}
	if err := seed.SetRole(ctx, *owner, *email, *project, *role); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s is now %s in %s\n", *email, *role, *project)
	return nil
}

// usersPassword is `users password`: the new password comes from --password-stdin (so it stays
// out of the shell history and the process list) or --password.
func usersPassword(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := newFlags("users password", "set a new password for an account and sign it out everywhere")
	owner := ownerURLFlag(fs)
	email := fs.String("email", "", "the account's email (required)")
	password := fs.String("password", "", "the new password, at least --password-min-length characters (prefer --password-stdin)")
	fromStdin := fs.Bool("password-stdin", false, "read the new password from the first line of standard input")
	minLength := passwordMinLengthFlag(fs)
	bcryptCost := bcryptCostFlag(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	minLen, err := minLength()
	if err != nil {
		return err
	}
	cost, err := bcryptCost()
	if err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("set --owner-url or DATABASE_OWNER_URL")
	}
	if *email == "" {
		return errors.New("users password needs --email")
	}
	pw := *password
	if *fromStdin {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read the password from standard input: %w", err)
		}
		pw = strings.TrimRight(line, "\r\n")
	}
	if pw == "" {
		return errors.New("users password needs --password-stdin or --password")
	}
	if err := seed.ResetPassword(ctx, *owner, *email, pw, minLen, cost); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "password of %s changed; its sessions are ended\n", *email)
	return nil
}

// usersDisable is `users disable` and `users enable`.
func usersDisable(ctx context.Context, cmd string, args []string, stdout io.Writer) error {
	summary := "stop an account from signing in and end its sessions"
	if cmd == "enable" {
		summary = "let a disabled account sign in again"
	}
	fs := newFlags("users "+cmd, summary)
	owner := ownerURLFlag(fs)
	email := fs.String("email", "", "the account's email (required)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("set --owner-url or DATABASE_OWNER_URL")
	}
	if *email == "" {
		return fmt.Errorf("users %s needs --email", cmd)
	}
	if err := seed.SetDisabled(ctx, *owner, *email, cmd == "disable"); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s is %sd\n", *email, cmd)
	return nil
}
