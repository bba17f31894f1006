package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"masthead/internal/seed"
)

func init() {
	commands["users"] = command{summary: "manage accounts: users create --email --password --project --role | users list", run: runUsers}
}

const usersUsage = `usage: masthead users <create|list> [flags]

  create   create a confirmed account, optionally with a role in a project
  list     list accounts with their projects and roles

Run 'masthead users <create|list> -h' for their flags`

func runUsers(ctx context.Context, args []string, stdout io.Writer, _ *slog.Logger) error {
	if len(args) == 0 {
		return errors.New(usersUsage)
	}
	switch args[0] {
	case "create":
		return usersCreate(ctx, args[1:], stdout)
	case "list":
		return usersList(ctx, args[1:], stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usersUsage)
		return flag.ErrHelp
	}
	return fmt.Errorf("unknown users command %q (want create or list)\n\n%s", args[0], usersUsage)
}

func usersCreate(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("users create", "create a confirmed account, optionally with a role in a project")
	owner := ownerURLFlag(fs)
	email := fs.String("email", "", "the account's email (required)")
	password := fs.String("password", "", "the account's password, at least 8 characters (required)")
	project := fs.String("project", "", "slug of a project to join (optional)")
	role := fs.String("role", "viewer", "role in that project: "+strings.Join(seed.Roles, ", "))
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("set --owner-url or DATABASE_OWNER_URL")
	}
	id, err := seed.CreateUser(ctx, *owner, *email, *password, *project, *role)
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
