import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/config';
import { dataSourceOptions } from './src/database/data-source';

/** The migration CLI's DataSource: the same definition the server uses. */
export default new DataSource(dataSourceOptions(loadConfig(), [`${__dirname}/src/**/*.entity.{ts,js}`]));
