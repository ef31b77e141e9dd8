// Command temporal-postgres runs a whole Temporal server (frontend, history, matching and worker services in
// one process) on PostgreSQL: the server library go.temporal.io/server, its postgres12 SQL plugin for both the
// persistence and the visibility store. It is the PostgreSQL-backed counterpart of `temporal server
// start-dev` (SQLite) for this project: one binary, one loopback port, the namespace and search attributes
// registered, dynamic config from a file and from flags.
//
// With -auto-setup it first creates the two databases when they are missing and sets up or updates their
// schemas to the versions this server needs, from the SQL schemas embedded in the server module (the same
// steps as `temporal-sql-tool create-database`, `setup-schema -v 0.0` and `update-schema`); running it again
// on a set-up database changes nothing. Without it the databases must already be at the right version (the
// server checks at start).
//
// Flags fall back to the environment variables temporal-sql-tool reads (SQL_HOST, SQL_PORT, SQL_USER,
// SQL_PASSWORD, SQL_DATABASE, SQL_PLUGIN) and SQL_VISIBILITY_DATABASE. See README.md beside this file.
//
// Once the namespace answers and the search attributes are registered it prints one line starting with
// "temporal-postgres: serving" on stdout. SIGINT or SIGTERM stops it cleanly.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lib/pq"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/headers"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"
	dbschema "go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"gopkg.in/yaml.v3"
)

const (
	// Schema folders inside the server module's embedded schema file system (go.temporal.io/server/schema).
	mainSchema       = "postgresql/v12/temporal"
	visibilitySchema = "postgresql/v12/visibility"
	clusterName      = "active"
)

// Dynamic config this binary sets unless the file or a -dynamic-config-value says otherwise.
var builtinDynamicConfig = map[string]any{
	// The values `temporal server start-dev` sets, so the two local servers behave alike: a search attribute
	// is usable as soon as it is registered (every read of the search attribute cache goes to the database),
	// and the persistence rate limits are raised to match.
	"system.forceSearchAttributesCacheRefreshOnRead": true,
	"frontend.persistenceMaxQPS":                     10000,
	"history.persistenceMaxQPS":                      45000,
	// The PostgreSQL schema stores workflow ids as VARCHAR(255). A longer id passes the server's default
	// limit (1,000) and then fails in the database with a retryable error: a child workflow's start is then
	// retried without end. At 255 the server refuses it at once and says why.
	"limit.maxIDLength": 255,
}

// stringList is a flag that may be given more than once.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

type options struct {
	ip               string
	port             int
	httpPort         int
	sqlHost          string
	sqlPort          int
	sqlUser          string
	sqlPassword      string
	sqlPlugin        string
	database         string
	visibilityDB     string
	maxConns         int
	autoSetup        bool
	setupOnly        bool
	namespaces       stringList
	retention        time.Duration
	searchAttributes stringList
	dcFile           string
	dcValues         stringList
	shards           int
	logLevel         string
	startTimeout     time.Duration
}

func envOr(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return fallback
}

func envIntOr(name string, fallback int) int {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return fallback
}

func parseFlags() *options {
	o := &options{}
	flag.StringVar(&o.ip, "ip", "127.0.0.1", "IP the services listen on")
	flag.IntVar(&o.port, "port", 7233, "frontend gRPC port")
	flag.IntVar(&o.httpPort, "http-port", 0, "frontend HTTP API port (0: a free one; -1: off)")
	flag.StringVar(&o.sqlHost, "sql-host", envOr("SQL_HOST", "127.0.0.1"), "PostgreSQL host (SQL_HOST)")
	flag.IntVar(&o.sqlPort, "sql-port", envIntOr("SQL_PORT", 5432), "PostgreSQL port (SQL_PORT)")
	flag.StringVar(&o.sqlUser, "sql-user", envOr("SQL_USER", "postgres"), "PostgreSQL user (SQL_USER)")
	flag.StringVar(&o.sqlPassword, "sql-password", envOr("SQL_PASSWORD", ""),
		"PostgreSQL password (SQL_PASSWORD; prefer the variable: flags show in the process list)")
	flag.StringVar(&o.sqlPlugin, "sql-plugin", envOr("SQL_PLUGIN", postgresql.PluginName),
		"SQL plugin: "+postgresql.PluginName+" (lib/pq) or "+postgresql.PluginNamePGX+" (pgx) (SQL_PLUGIN)")
	flag.StringVar(&o.database, "database", envOr("SQL_DATABASE", "temporal"),
		"database of the persistence store (SQL_DATABASE)")
	flag.StringVar(&o.visibilityDB, "visibility-database", envOr("SQL_VISIBILITY_DATABASE", "temporal_visibility"),
		"database of the visibility store (SQL_VISIBILITY_DATABASE)")
	flag.IntVar(&o.maxConns, "sql-max-conns", 10,
		"connections per pool (each of the 4 services has one pool per store: up to 8× this in all)")
	flag.BoolVar(&o.autoSetup, "auto-setup", false,
		"create the databases if missing and set up / update their schemas before starting")
	flag.BoolVar(&o.setupOnly, "setup-only", false, "do what -auto-setup does, then exit")
	flag.Var(&o.namespaces, "namespace", "namespace to register if missing (repeatable; default: default)")
	flag.DurationVar(&o.retention, "namespace-retention", 24*time.Hour, "retention of namespaces this registers")
	flag.Var(&o.searchAttributes, "search-attribute",
		"Name=Type custom search attribute to register in every -namespace if missing (repeatable; "+
			"Type: Keyword, Text, Int, Double, Bool, Datetime, KeywordList)")
	flag.StringVar(&o.dcFile, "dynamic-config-file", "",
		"dynamic config YAML file (the server's format; re-read when it changes)")
	flag.Var(&o.dcValues, "dynamic-config-value", "KEY=VALUE dynamic config, VALUE in YAML/JSON (repeatable; "+
		"wins over the file)")
	flag.IntVar(&o.shards, "num-history-shards", 4, "history shards (fixed by the first start on a database)")
	flag.StringVar(&o.logLevel, "log-level", "warn", "server log level: debug, info, warn, error")
	flag.DurationVar(&o.startTimeout, "start-timeout", 2*time.Minute,
		"how long to wait for the frontend to register the namespace and search attributes")
	version := flag.Bool("version", false, "print the Temporal server version this is built on, and exit")
	flag.Parse()
	if *version {
		fmt.Printf("temporal-postgres (server %s)\n", headers.ServerVersion)
		os.Exit(0)
	}
	if len(o.namespaces) == 0 {
		o.namespaces = stringList{"default"}
	}
	return o
}

func main() {
	o := parseFlags()
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "temporal-postgres: %v\n", err)
		os.Exit(1)
	}
}

func run(o *options) error {
	if o.sqlPlugin != postgresql.PluginName && o.sqlPlugin != postgresql.PluginNamePGX {
		return fmt.Errorf("-sql-plugin %q: expected %s or %s", o.sqlPlugin, postgresql.PluginName,
			postgresql.PluginNamePGX)
	}
	searchAttributes, err := parseSearchAttributes(o.searchAttributes)
	if err != nil {
		return err
	}
	dcValues, err := parseDynamicConfigValues(o.dcValues)
	if err != nil {
		return err
	}
	logger := log.NewZapLogger(log.BuildZapLogger(log.Config{Level: o.logLevel, Format: "console"}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if o.autoSetup || o.setupOnly {
		if err := setUpDatabases(o, logger); err != nil {
			return err
		}
		if o.setupOnly {
			return nil
		}
	}

	if err := ping(o, o.database); err != nil {
		return fmt.Errorf("cannot connect to PostgreSQL at %s:%d, database %s, as %s: %w (-auto-setup creates "+
			"missing databases)", o.sqlHost, o.sqlPort, o.database, o.sqlUser, err)
	}
	if o.httpPort == 0 {
		// As start-dev does: the server disables Nexus, with a warning, where there is no HTTP API.
		if o.httpPort, err = freePort(o.ip); err != nil {
			return fmt.Errorf("finding a port for the HTTP API: %w", err)
		}
	} else if o.httpPort < 0 {
		o.httpPort = 0
	}
	conf, hosts, err := serverConfig(o)
	if err != nil {
		return err
	}
	dc, err := newLayeredClient(o.dcFile, dcValues, logger, ctx.Done())
	if err != nil {
		return err
	}
	server, err := temporal.NewServer(
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithConfig(conf),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithDynamicConfigClient(dc),
	)
	if err != nil {
		return fmt.Errorf("creating the server: %w", err)
	}
	if err := server.Start(); err != nil {
		return fmt.Errorf("starting the server: %w", err)
	}
	address := net.JoinHostPort(o.ip, strconv.Itoa(o.port))
	regCtx, cancel := context.WithTimeout(ctx, o.startTimeout)
	err = register(regCtx, address, o.namespaces, o.retention, searchAttributes)
	cancel()
	if err != nil {
		_ = server.Stop()
		return err
	}
	fmt.Printf("temporal-postgres: serving on %s, namespace %s (server %s; %s on %s:%d, databases %s and %s)\n",
		address, strings.Join(o.namespaces, ", "), headers.ServerVersion, o.sqlPlugin, o.sqlHost, o.sqlPort,
		o.database, o.visibilityDB)

	<-ctx.Done()
	if err := server.Stop(); err != nil {
		return fmt.Errorf("stopping the server: %w", err)
	}
	return nil
}

func sqlConfig(o *options, database string) *config.SQL {
	return &config.SQL{
		PluginName:      o.sqlPlugin,
		DatabaseName:    database,
		ConnectAddr:     net.JoinHostPort(o.sqlHost, strconv.Itoa(o.sqlPort)),
		ConnectProtocol: "tcp",
		User:            o.sqlUser,
		Password:        o.sqlPassword,
		MaxConns:        o.maxConns,
		MaxIdleConns:    o.maxConns,
		MaxConnLifetime: time.Hour,
	}
}

// setUpDatabases creates each database when it is missing, then brings its schema to the newest version in
// the embedded schema folders. Every step is idempotent.
func setUpDatabases(o *options, logger log.Logger) error {
	for _, db := range []struct{ name, schema string }{
		{o.database, mainSchema},
		{o.visibilityDB, visibilitySchema},
	} {
		if err := setUpDatabase(o, db.name, db.schema, logger); err != nil {
			return fmt.Errorf("setting up database %s on PostgreSQL at %s:%d as %s: %w", db.name, o.sqlHost,
				o.sqlPort, o.sqlUser, err)
		}
	}
	return nil
}

func setUpDatabase(o *options, name, schemaName string, logger log.Logger) error {
	cfg := sqlConfig(o, name)
	if err := ping(o, name); err != nil {
		var pqErr *pq.Error
		if !errors.As(err, &pqErr) || pqErr.Code != "3D000" { // 3D000: invalid_catalog_name, no such database
			return err
		}
		// Connects to the server's default database ("postgres", else "defaultdb") to create this one.
		if err := sqltool.DoCreateDatabase(sqlConfig(o, name), "", logger); err != nil {
			return fmt.Errorf("creating it: %w", err)
		}
	}
	conn, err := sqltool.NewConnection(cfg, logger)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Version tables at 0.0 (kept if the schema is newer), then every versioned step above the current one.
	setup := &dbschema.SetupConfig{InitialVersion: "0.0"}
	if err := dbschema.NewSetupSchemaTask(conn, setup, logger).Run(); err != nil {
		return fmt.Errorf("setting up the schema version tables: %w", err)
	}
	update := &dbschema.UpdateConfig{DBName: name, SchemaName: schemaName}
	if err := dbschema.NewUpdateSchemaTask(conn, update, logger).Run(); err != nil {
		return fmt.Errorf("updating the schema: %w", err)
	}
	return nil
}

// ping connects to one database and says why it cannot, in PostgreSQL's words (the server's own connection
// pool logs a stack trace and answers "no usable database connection found").
func ping(o *options, database string) error {
	dsn := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(o.sqlUser, o.sqlPassword),
		Host:     net.JoinHostPort(o.sqlHost, strconv.Itoa(o.sqlPort)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable&connect_timeout=10",
	}
	db, err := sql.Open("postgres", dsn.String())
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Ping()
}

func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func serverConfig(o *options) (*config.Config, map[primitives.ServiceName]static.Hosts, error) {
	conf := &config.Config{}
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = o.ip
	conf.Persistence = config.Persistence{
		DefaultStore:     "postgres",
		VisibilityStore:  "postgres-visibility",
		NumHistoryShards: int32(o.shards),
		DataStores: map[string]config.DataStore{
			"postgres":            {SQL: sqlConfig(o, o.database)},
			"postgres-visibility": {SQL: sqlConfig(o, o.visibilityDB)},
		},
	}
	frontend := net.JoinHostPort(o.ip, strconv.Itoa(o.port))
	info := cluster.ClusterInformation{Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontend}
	if o.httpPort != 0 {
		info.HTTPAddress = net.JoinHostPort(o.ip, strconv.Itoa(o.httpPort))
	}
	conf.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation:       map[string]cluster.ClusterInformation{clusterName: info},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = frontend

	// One process, so each service is found at a fixed address: no ringpop, no membership table to clean.
	conf.Services = map[string]config.Service{}
	hosts := map[primitives.ServiceName]static.Hosts{}
	for _, name := range []primitives.ServiceName{
		primitives.FrontendService, primitives.HistoryService, primitives.MatchingService, primitives.WorkerService,
	} {
		var svc config.Service
		svc.RPC.BindOnIP = o.ip
		if name == primitives.FrontendService {
			svc.RPC.GRPCPort = o.port
			svc.RPC.HTTPPort = o.httpPort
		} else {
			port, err := freePort(o.ip)
			if err != nil {
				return nil, nil, fmt.Errorf("finding a port for the %s service: %w", name, err)
			}
			svc.RPC.GRPCPort = port
		}
		conf.Services[string(name)] = svc
		hosts[name] = static.SingleLocalHost(net.JoinHostPort(o.ip, strconv.Itoa(svc.RPC.GRPCPort)))
	}
	return conf, hosts, nil
}

func parseSearchAttributes(specs []string) (map[string]enumspb.IndexedValueType, error) {
	out := map[string]enumspb.IndexedValueType{}
	for _, spec := range specs {
		name, typeName, ok := strings.Cut(spec, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("-search-attribute %q: expected Name=Type", spec)
		}
		t, err := enumspb.IndexedValueTypeFromString(typeName)
		if err != nil || t == enumspb.INDEXED_VALUE_TYPE_UNSPECIFIED {
			return nil, fmt.Errorf("-search-attribute %q: unknown type %q", spec, typeName)
		}
		out[name] = t
	}
	return out, nil
}

func parseDynamicConfigValues(specs []string) (map[string]any, error) {
	out := map[string]any{}
	for _, spec := range specs {
		key, raw, ok := strings.Cut(spec, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("-dynamic-config-value %q: expected KEY=VALUE", spec)
		}
		var value any
		// YAML is a superset of JSON: `true`, `1000`, `"text"` and `[...]` all read as the server expects
		// (whole numbers as int, which the server's int settings require).
		if err := yaml.Unmarshal([]byte(raw), &value); err != nil {
			return nil, fmt.Errorf("-dynamic-config-value %q: %w", spec, err)
		}
		out[key] = value
	}
	return out, nil
}

// register waits for the frontend, registers each namespace and its search attributes when missing, and
// returns once every namespace answers DescribeNamespace.
func register(
	ctx context.Context,
	address string,
	namespaces []string,
	retention time.Duration,
	searchAttributes map[string]enumspb.IndexedValueType,
) error {
	conn, err := grpc.NewClient(address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	workflow := workflowservice.NewWorkflowServiceClient(conn)
	operator := operatorservice.NewOperatorServiceClient(conn)
	for _, ns := range namespaces {
		err := retry(ctx, "registering namespace "+ns, func(ctx context.Context) error {
			_, err := workflow.RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
				Namespace:                        ns,
				WorkflowExecutionRetentionPeriod: durationpb.New(retention),
			})
			if status.Code(err) == codes.AlreadyExists {
				return nil
			}
			return err
		})
		if err != nil {
			return err
		}
		// A new namespace reaches the frontend's namespace cache within its refresh interval (seconds).
		err = retry(ctx, "waiting for namespace "+ns, func(ctx context.Context) error {
			_, err := workflow.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: ns})
			return err
		})
		if err != nil {
			return err
		}
		if len(searchAttributes) == 0 {
			continue
		}
		err = retry(ctx, "registering search attributes in "+ns, func(ctx context.Context) error {
			list, err := operator.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
			if err != nil {
				return err
			}
			missing := map[string]enumspb.IndexedValueType{}
			for name, t := range searchAttributes {
				existing, ok := list.CustomAttributes[name]
				if !ok {
					missing[name] = t
				} else if existing != t {
					return permanent{fmt.Errorf("search attribute %s is already registered as %s, not %s",
						name, existing, t)}
				}
			}
			if len(missing) == 0 {
				return nil
			}
			_, err = operator.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
				Namespace:        ns,
				SearchAttributes: missing,
			})
			if err == nil {
				// Listed again on the next pass: done once all are there.
				return errors.New("added, checking")
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// permanent marks an error that retrying cannot fix.
type permanent struct{ error }

// retry calls fn until it succeeds, fails permanently, or ctx ends; the error says what was being done.
func retry(ctx context.Context, what string, fn func(context.Context) error) error {
	var last error
	for {
		callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := fn(callCtx)
		cancel()
		if err == nil {
			return nil
		}
		var p permanent
		if errors.As(err, &p) || status.Code(err) == codes.InvalidArgument {
			return fmt.Errorf("%s: %w", what, err)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: gave up (%v); last error: %w", what, ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// layeredClient is the server's dynamic config: -dynamic-config-value entries, then the file (re-read when
// it changes), then builtinDynamicConfig, then the server's defaults. Keys are case-insensitive, as in the
// server's own file client.
type layeredClient struct {
	values   map[string][]dynamicconfig.ConstrainedValue
	file     dynamicconfig.Client
	defaults map[string][]dynamicconfig.ConstrainedValue
}

var _ dynamicconfig.NotifyingClient = (*layeredClient)(nil)

func constant(m map[string]any) map[string][]dynamicconfig.ConstrainedValue {
	out := make(map[string][]dynamicconfig.ConstrainedValue, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = []dynamicconfig.ConstrainedValue{{Value: v}}
	}
	return out
}

func newLayeredClient(
	file string,
	values map[string]any,
	logger log.Logger,
	done <-chan struct{},
) (*layeredClient, error) {
	c := &layeredClient{values: constant(values), defaults: constant(builtinDynamicConfig)}
	if file == "" {
		return c, nil
	}
	// The file client stops polling when this channel closes.
	doneCh := make(chan interface{})
	var once sync.Once
	go func() {
		<-done
		once.Do(func() { close(doneCh) })
	}()
	fc, err := dynamicconfig.NewFileBasedClient(
		&dynamicconfig.FileBasedClientConfig{Filepath: file, PollInterval: 5 * time.Second}, logger, doneCh)
	if err != nil {
		return nil, fmt.Errorf("dynamic config file %s: %w", file, err)
	}
	c.file = fc
	return c, nil
}

func (c *layeredClient) GetValue(key dynamicconfig.Key) []dynamicconfig.ConstrainedValue {
	k := strings.ToLower(string(key))
	if v, ok := c.values[k]; ok {
		return v
	}
	if c.file != nil {
		if v := c.file.GetValue(key); len(v) > 0 {
			return v
		}
	}
	return c.defaults[k]
}

// Subscribe passes on the file's changes, as this client's values: a key a flag sets is not the file's to
// change, and a key the file drops falls back to the built-in value.
func (c *layeredClient) Subscribe(update dynamicconfig.ClientUpdateFunc) (cancel func()) {
	fc, ok := c.file.(dynamicconfig.NotifyingClient)
	if !ok {
		return func() {}
	}
	return fc.Subscribe(func(changed map[dynamicconfig.Key][]dynamicconfig.ConstrainedValue) {
		out := make(map[dynamicconfig.Key][]dynamicconfig.ConstrainedValue, len(changed))
		for key := range changed {
			if _, flagged := c.values[strings.ToLower(string(key))]; flagged {
				continue
			}
			out[key] = c.GetValue(key)
		}
		if len(out) > 0 {
			update(out)
		}
	})
}
