import { defineConfig } from 'drizzle-kit'

// The PostgreSQL migrations, from the pg schema (the SQLite ones: drizzle.config.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/pg-schema.ts',
  out: './db/pg-migrations',
})
